//go:build integration

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// The image matrix: what users run (Debian userland, GNU tools, no cpio; a
// toolchain), the busybox fixture, and an image with no shell at all. The
// images come from scripts/test-images.sh (make image); a missing one fails
// the test rather than skipping it.
var shellImages = []string{"busybox:latest", "litterbox-test/debian:bookworm", "litterbox-test/python:bookworm"}

const noShellImage = "litterbox-test/noshell:latest"

// imageManager is a Manager for the repository at dir whose sandboxes run
// image; everything made for it is removed when the test ends.
func imageManager(t testing.TB, dir, image string) *Manager {
	t.Helper()
	if _, err := testenv.Docker("image", "inspect", image); err != nil {
		t.Fatalf("image %s is missing: run make image (scripts/test-images.sh)", image)
	}
	cfg := config.Default()
	cfg.Image = image
	isolate(&cfg)
	m, err := Open(context.Background(), testenv.Exec(), engine.Docker, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	return m
}

// matrixSandbox makes a repository with files and a sandbox "work" on image.
func matrixSandbox(t *testing.T, image string, files testenv.Files) *Manager {
	t.Helper()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbit"))
	testenv.NewRepo(t, dir, files)
	m := imageManager(t, dir, image)
	c, err := m.Create(context.Background(), create.CreateOptions{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	if image != noShellImage && (c.Status != create.StatusActive || c.Setup.ExitCode != 0) {
		t.Fatalf("create on %s: %+v", image, c)
	}
	return m
}

// isolate sets the isolation the run asks for: LITTERBOX_TEST_ISOLATION=gvisor
// runs the image matrix and the attack table again under gVisor (make
// integration-gvisor).
func isolate(cfg *config.Config) {
	if iso := os.Getenv("LITTERBOX_TEST_ISOLATION"); iso != "" {
		cfg.Isolation = iso
	}
}

func imageName(image string) string { return strings.NewReplacer("/", "-", ":", "-").Replace(image) }

// Every kind of change is committed, by bash and by the file tools, on
// every image: the bug this guards against lost work silently on GNU
// userlands.
func TestMatrixChangeLoop(t *testing.T) {
	for _, image := range shellImages {
		t.Run(imageName(image), func(t *testing.T) {
			m := matrixSandbox(t, image, testenv.SmallFiles)
			ctx := context.Background()
			if n := commits(t, m); n != 1 {
				t.Errorf("a sandbox nobody touched has %d commits over the base", n-1)
			}
			// The reproduction from the issue: GNU diff made this no commit.
			res := bash(t, m, "echo change >> README.md; sleep 2")
			if res.Snapshot == "" || !strings.Contains(show(t, m, "README.md"), "change") {
				t.Fatalf("append not committed: %+v", res)
			}
			w, err := m.Agent.Write(ctx, "work", "notes/new.txt", []byte("written\n"))
			if err != nil || w.Snapshot == "" || show(t, m, "notes/new.txt") != "written" {
				t.Fatalf("write: %+v %v", w, err)
			}
			// Names git can track that no line-based protocol carries.
			res = bash(t, m, `printf a > "$(printf 'new\nline')"; printf b > "$(printf 'tab\there')"; printf c > "$(printf 'bad\377byte')"; printf d > ./-dash; printf e > ' lead space'; printf f > '"quoted"'`)
			for name, want := range map[string]string{"new\nline": "a", "tab\there": "b", "bad\xffbyte": "c", "-dash": "d", " lead space": "e", `"quoted"`: "f"} {
				if got := show(t, m, name); got != want {
					t.Errorf("%q committed as %q (snapshot %s)", name, got, res.Snapshot)
				}
			}
			// Deletes, renames, the executable bit and symlinks.
			bash(t, m, "rm src/main.go && mv 'docs/a b/c.txt' docs/moved.txt && chmod +x README.md && ln -s README.md link")
			tr := tree(t, m)
			for _, want := range []string{"100755 README.md", "120000 link", "100644 docs/moved.txt"} {
				if !strings.Contains(tr, want) {
					t.Errorf("tree lacks %q:\n%s", want, tr)
				}
			}
			if strings.Contains(tr, "src/main.go") || strings.Contains(tr, "c.txt") {
				t.Errorf("deleted or moved files still in the tree:\n%s", tr)
			}
			// A directory ignored by its own .gitignore of "*" (pytest,
			// mypy and ruff caches, venvs) stays out on every later call.
			before := commits(t, m)
			bash(t, m, "mkdir -p cache/v && printf '*\\n' > cache/.gitignore && echo x > cache/v/a && echo y > cache/b")
			bash(t, m, "echo z >> cache/b && echo w > cache/v/c")
			bash(t, m, "true")
			if n := commits(t, m); n != before || strings.Contains(tree(t, m), "cache/") {
				t.Errorf("self-ignored directory committed (%d new commits):\n%s", n-before, tree(t, m))
			}
			// A timeout kills every process the command started, also those
			// in the background, whatever the image's ps or kill.
			tres, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "echo t > timed.out; sleep 300 & sleep 301", Timeout: 2 * time.Second})
			if err != nil || !tres.TimedOut || tres.Snapshot == "" {
				t.Errorf("timeout: %+v %v", tres, err)
			}
			left := bash(t, m, `for p in /proc/[0-9]*; do tr '\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 30[01]' || true`)
			if strings.TrimSpace(left.Stdout) != "0" {
				t.Errorf("processes left after the timeout: %q", left.Stdout)
			}
			// A no-op makes no commit.
			if res := bash(t, m, "ls >/dev/null"); res.Snapshot != "" {
				t.Errorf("no-op committed %s", res.Snapshot)
			}
			// The read-only tools and edit on this image.
			r, err := m.Agent.Read(ctx, "work", "README.md", 0, 0)
			if err != nil || !strings.HasPrefix(r.Content, "# test repo\nchange\n") || r.TotalLines != 2 {
				t.Errorf("read: %+v %v", r, err)
			}
			if g, _, err := m.Agent.Grep(ctx, "work", "^chan", "", ""); err != nil || len(g) != 1 || g[0].Path != "README.md" || g[0].Line != 2 {
				t.Errorf("grep: %+v %v", g, err)
			}
			if l, _, err := m.Agent.Glob(ctx, "work", "**/*.txt", ""); err != nil || strings.Join(l, ",") != "docs/moved.txt,notes/new.txt" {
				t.Errorf("glob: %v %v", l, err)
			}
			if e, err := m.Agent.Edit(ctx, "work", "notes/new.txt", one("written", "edited", false)); err != nil || e.Snapshot == "" {
				t.Errorf("edit: %+v %v", e, err)
			}
			// After a restart the container has no manifest: a full scan
			// commits exactly what changed, here a deletion made by hand.
			if _, err := testenv.Docker("restart", "-t", "1", m.Repo.Names("work").Container); err != nil {
				t.Fatal(err)
			}
			before = commits(t, m)
			if res := bash(t, m, "true"); res.Snapshot != "" || !res.FullScan {
				t.Errorf("first call after a restart committed %s:\n%s", res.Snapshot, testenv.Git(t, m.Repo.Root, "show", "--stat", "litterbox/work"))
			}
			bash(t, m, "rm notes/new.txt")
			if commits(t, m) != before+1 || strings.Contains(tree(t, m), "notes/new.txt") {
				t.Errorf("deletion after restart:\n%s", tree(t, m))
			}
		})
	}
}

// pytest writes .pytest_cache (ignored by its own "*") and __pycache__:
// neither reaches the branch, on this call or the next.
func TestMatrixPytestCache(t *testing.T) {
	m := matrixSandbox(t, "litterbox-test/python:bookworm", testenv.Files{
		"test_add.py": "def test_add():\n    assert 1 + 1 == 2\n",
		".gitignore":  "__pycache__/\n",
	})
	res := bash(t, m, "python3 -m pytest -q 2>&1")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "1 passed") {
		t.Fatalf("pytest: %+v", res)
	}
	if res.Snapshot != "" {
		t.Errorf("pytest's caches committed:\n%s", testenv.Git(t, m.Repo.Root, "show", "--stat", res.Snapshot))
	}
	if res := bash(t, m, "ls -a .pytest_cache >/dev/null && true"); res.Snapshot != "" {
		t.Errorf("the next call committed %s:\n%s", res.Snapshot, tree(t, m))
	}
	if n := commits(t, m); n != 1 {
		t.Errorf("%d commits over the base", n-1)
	}
}

// With no shell in the image the file tools still work, and bash says why
// it cannot.
func TestMatrixNoShell(t *testing.T) {
	m := matrixSandbox(t, noShellImage, testenv.SmallFiles)
	ctx := context.Background()
	w, err := m.Agent.Write(ctx, "work", "hello.txt", []byte("one\ntwo\n"))
	if err != nil || w.Snapshot == "" {
		t.Fatalf("write: %+v %v", w, err)
	}
	if r, err := m.Agent.Read(ctx, "work", "hello.txt", 1, 1); err != nil || r.Content != "two\n" {
		t.Errorf("read: %+v %v", r, err)
	}
	if e, err := m.Agent.Edit(ctx, "work", "hello.txt", one("two", "three", false)); err != nil || e.Snapshot == "" {
		t.Errorf("edit: %+v %v", e, err)
	}
	if p, err := m.Agent.Patch(ctx, "work", "README.md", "--- a/README.md\n+++ b/README.md\n@@ -1 +1 @@\n-# test repo\n+# patched\n"); err != nil || p.Snapshot == "" {
		t.Errorf("patch: %+v %v", p, err)
	}
	if l, _, err := m.Agent.Ls(ctx, "work", "", false); err != nil || len(l) == 0 {
		t.Errorf("ls: %v %v", l, err)
	}
	if g, _, err := m.Agent.Grep(ctx, "work", "three", "", ""); err != nil || len(g) != 1 {
		t.Errorf("grep: %v %v", g, err)
	}
	if l, _, err := m.Agent.Glob(ctx, "work", "*.txt", ""); err != nil || len(l) != 1 {
		t.Errorf("glob: %v %v", l, err)
	}
	if _, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "true"}); !errors.Is(err, agent.ErrNoShell) || strings.Contains(err.Error(), "\n") {
		t.Errorf("bash without a shell: %v", err)
	}
	if got := show(t, m, "hello.txt"); got != "one\nthree" {
		t.Errorf("branch has %q", got)
	}
}

// Files under git LFS look in the sandbox as in a checkout and are
// committed as `git add` stores them: pointers stay pointers.
func TestMatrixLFS(t *testing.T) {
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbit"))
	testenv.NewRepo(t, dir, testenv.Files{"README.md": "lfs\n"})
	testenv.Git(t, dir, "lfs", "install", "--local")
	testenv.Git(t, dir, "lfs", "track", "*.bin")
	big := strings.Repeat("binary\x00data", 30000)
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), []byte(big), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "-A")
	testenv.Git(t, dir, "commit", "-q", "-m", "lfs file")
	m := imageManager(t, dir, "litterbox-test/debian:bookworm")
	if _, err := m.Create(context.Background(), create.CreateOptions{Name: "work"}); err != nil {
		t.Fatal(err)
	}
	if n := commits(t, m); n != 2 {
		t.Fatalf("a sandbox nobody touched has %d commits over the base:\n%s", n-2, testenv.Git(t, dir, "log", "--stat", "litterbox/work"))
	}
	if res := bash(t, m, `test "$(wc -c < big.bin)" -eq 330000`); res.ExitCode != 0 {
		t.Errorf("big.bin in the sandbox is not the checked-out content: %+v", res)
	}
	bash(t, m, "echo more >> big.bin && cp big.bin second.bin")
	for _, f := range []string{"big.bin", "second.bin"} {
		if got := show(t, m, f); !strings.HasPrefix(got, "version https://git-lfs.github.com/spec/v1") {
			t.Errorf("%s committed as %d bytes, not as an LFS pointer", f, len(got))
		}
	}
}

// A submodule's content is in the sandbox where the host has it; its
// gitlink is never turned into files, and the file tools refuse it.
func TestMatrixSubmodule(t *testing.T) {
	tmp := t.TempDir()
	lib := testenv.NewRepo(t, filepath.Join(tmp, "lib"), testenv.Files{"lib.txt": "library\n"})
	dir := filepath.Join(tmp, testenv.UniqueName("lbit"))
	testenv.NewRepo(t, dir, testenv.Files{"README.md": "super\n"})
	testenv.Git(t, dir, "-c", "protocol.file.allow=always", "submodule", "add", "-q", lib, "vendor/lib")
	testenv.Git(t, dir, "commit", "-q", "-m", "submodule")
	m := imageManager(t, dir, "litterbox-test/debian:bookworm")
	c, err := m.Create(context.Background(), create.CreateOptions{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Submodules) != 1 || !c.Submodules[0].Copied || c.Submodules[0].Path != "vendor/lib" {
		t.Fatalf("create's submodules: %+v", c.Submodules)
	}
	if r, err := m.Agent.Read(context.Background(), "work", "vendor/lib/lib.txt", 0, 0); err != nil || r.Content != "library\n" {
		t.Errorf("submodule content: %+v %v", r, err)
	}
	res := bash(t, m, "echo changed >> vendor/lib/lib.txt && echo new > vendor/lib/new.txt && echo top > top.txt")
	tr := testenv.Git(t, dir, "ls-tree", "-r", "litterbox/work")
	if !strings.Contains(tr, "160000 commit") || strings.Contains(tr, "vendor/lib/") || !strings.Contains(tr, "top.txt") {
		t.Errorf("after changes inside the submodule (snapshot %s):\n%s", res.Snapshot, tr)
	}
	if _, err := m.Agent.Write(context.Background(), "work", "vendor/lib/x.txt", []byte("x")); err == nil || !strings.Contains(err.Error(), "inside submodule vendor/lib") {
		t.Errorf("write inside a submodule: %v", err)
	}
}

// After each call the branch must hold exactly what the container's /src
// holds (less ignored files), whatever the call did to directories: PID 1
// watches /src so a scan reads only changed directories, and this is where
// that could go wrong.
func TestMatrixTreeMatchesSandboxAfterEveryCall(t *testing.T) {
	steps := []string{
		"mkdir -p a/b/c && echo 1 > a/b/c/f",
		"rm -rf a && mkdir -p a/b/c && echo 2 > a/b/c/f",
		"mv a z",
		"mkdir -p m/n && echo x > m/n/g && mv m z/m",
		"echo y > z/m/n/g",
		"rm -rf z",
		"mkdir -p q/r/s && echo deep > q/r/s/t && chmod +x q/r/s/t",
		"rm -rf q/r && echo now-a-file > q/r",
		"rm q/r && mkdir -p q/r && echo back > q/r/x",
		"ln -s q/r/x link && mkdir -p node_modules/p && echo dep > node_modules/p/i.js",
		"rm -rf node_modules && echo gone > docs/new.txt && rm -rf docs/'a b'",
		"mkdir -p w && cd w && for i in 1 2 3 4 5 6 7 8 9; do mkdir -p d$i/e && echo $i > d$i/e/f; done",
		"find w -name f -exec sh -c 'echo changed >> \"$1\"' sh {} \\;",
		"mv w/d1 w/d1moved && mv w/d2/e w/d3/e2",
	}
	for _, image := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(imageName(image), func(t *testing.T) {
			m := matrixSandbox(t, image, testenv.SmallFiles)
			for _, step := range steps {
				res := bash(t, m, step)
				if res.ExitCode != 0 {
					t.Fatalf("%q: exit %d: %s", step, res.ExitCode, res.Stderr)
				}
				want := bash(t, m, `find . \( -name node_modules -o -name .git \) -prune -o \( -type f -o -type l \) -print | sed 's|^\./||' | sort | while IFS= read -r f; do if [ -L "$f" ]; then printf '%s -> %s\n' "$f" "$(readlink "$f")"; else printf '%s %s\n' "$f" "$(cat "$f" | tr '\n' '|')"; fi; done`).Stdout
				if got := branchListing(t, m); got != want {
					t.Fatalf("after %q the branch differs from the sandbox:\n got:\n%s\nwant:\n%s", step, got, want)
				}
			}
			// The scans read only what changed: nothing for a no-op, one
			// directory for one file.
			if res := bash(t, m, "true"); res.DirsRead != 0 || res.FullScan {
				t.Errorf("a no-op read %d directories (full %v)", res.DirsRead, res.FullScan)
			}
			if res := bash(t, m, "echo more >> w/d3/e/f"); res.DirsRead != 1 || res.Snapshot == "" {
				t.Errorf("a one-file change read %d directories, snapshot %q", res.DirsRead, res.Snapshot)
			}
		})
	}
}

// branchListing prints the branch tip as the oracle above prints /src.
func branchListing(t *testing.T, m *Manager) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(testenv.Git(t, m.Repo.Root, "ls-tree", "-r", "--format=%(objectmode) %(path)", "litterbox/work"), "\n") {
		mode, p, _ := strings.Cut(line, " ")
		body := testenv.Git(t, m.Repo.Root, "cat-file", "blob", "litterbox/work:"+p)
		if mode == "120000" {
			b.WriteString(p + " -> " + body + "\n")
			continue
		}
		b.WriteString(p + " " + strings.ReplaceAll(body, "\n", "|") + "|\n")
	}
	return b.String()
}

// A plain `go install` on a machine with a C compiler builds litterbox
// dynamically linked: its helper then travels with its own ELF interpreter
// and libc, and runs in images that have none (busybox) as in those that do.
func TestMatrixDynamicallyLinkedHelper(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "litterbox")
	root := strings.TrimSuffix(testenv.Git(t, ".", "rev-parse", "--show-toplevel"), "/")
	if _, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "go", Args: []string{"build", "-o", bin, "./cmd/litterbox"}, Dir: root, Env: []string{"CGO_ENABLED=1"}}); err != nil {
		t.Fatal(err)
	}
	h, err := helperbin.Inspect(bin)
	if err != nil {
		t.Fatal(err)
	}
	if h.Loader == "" || len(h.Libs) < 2 {
		t.Fatalf("a cgo build should need its interpreter and libc: %+v", h)
	}
	for _, image := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(imageName(image), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbit"))
			testenv.NewRepo(t, dir, testenv.SmallFiles)
			m := imageManager(t, dir, image)
			m.Agent.UseHelper(h)
			if c, err := m.Create(context.Background(), create.CreateOptions{Name: "work"}); err != nil || c.Setup.Stdout != "hello world\n" {
				t.Fatalf("create: %+v %v", c, err)
			}
			if res := bash(t, m, "echo dyn > dyn.txt"); res.Snapshot == "" || show(t, m, "dyn.txt") != "dyn" {
				t.Errorf("bash: %+v", res)
			}
			if r, err := m.Agent.Read(context.Background(), "work", "dyn.txt", 0, 0); err != nil || r.Content != "dyn\n" {
				t.Errorf("read: %+v %v", r, err)
			}
		})
	}
}

// Changes made between calls (a person's docker exec, a background
// command) are committed first, as their own snapshot, and the call's
// snapshot holds the call's changes only; a call after nothing happened
// makes no such snapshot and reads no directory.
func TestMatrixChangesBetweenCallsGetTheirOwnSnapshot(t *testing.T) {
	for _, image := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(imageName(image), func(t *testing.T) {
			ctx := context.Background()
			m := matrixSandbox(t, image, testenv.SmallFiles)
			exec(t, m, "work", "echo outside > outside.txt && mkdir -p d && echo x > d/y")
			res, err := m.Agent.Write(ctx, "work", "docs/agent_note.txt", []byte("note\n"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Between.Commit == "" || res.Between.Paths != 2 {
				t.Fatalf("between: %+v", res.Between)
			}
			if got := changedIn(t, m, res.Between.Commit); got != "d/y outside.txt" {
				t.Errorf("the between-calls snapshot holds %q", got)
			}
			if got := testenv.Git(t, m.Repo.Root, "log", "-1", "--format=%s", res.Between.Commit); got != "between calls: 2 paths" {
				t.Errorf("its subject: %q", got)
			}
			if got := changedIn(t, m, res.Snapshot); got != "docs/agent_note.txt" {
				t.Errorf("the write's snapshot holds %q", got)
			}
			if parent := testenv.Git(t, m.Repo.Root, "rev-parse", res.Snapshot+"^"); parent != res.Between.Commit {
				t.Errorf("the write's parent is %s, not the between-calls snapshot %s", parent, res.Between.Commit)
			}

			if _, err := servicectl.Background(ctx, m.Repo, "work", "bg", agent.BashOptions{Command: "echo bg > bg.txt; sleep 60"}); err != nil {
				t.Fatal(err)
			}
			for deadline := time.Now().Add(10 * time.Second); exec(t, m, "work", "cat bg.txt 2>/dev/null || true") != "bg\n"; time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the background command did not write bg.txt")
				}
			}
			res = bash(t, m, "echo call > call.txt")
			if got := changedIn(t, m, res.Between.Commit); got != "bg.txt" {
				t.Errorf("the background command's file: between %+v holds %q", res.Between, got)
			}
			if got := changedIn(t, m, res.Snapshot); got != "call.txt" {
				t.Errorf("the call's snapshot holds %q", got)
			}

			res = bash(t, m, "true")
			if res.Between.Commit != "" || res.Snapshot != "" || res.DirsRead != 0 {
				t.Errorf("a no-op after a quiet time: between %+v, snapshot %q, %d directories read", res.Between, res.Snapshot, res.DirsRead)
			}
		})
	}
}

// changedIn lists the paths commit changed, sorted, space-separated.
func changedIn(t *testing.T, m *Manager, commit string) string {
	t.Helper()
	if commit == "" {
		return ""
	}
	out := testenv.Git(t, m.Repo.Root, "diff-tree", "--no-commit-id", "--name-only", "-r", commit)
	return strings.Join(strings.Fields(out), " ")
}

// A moved directory, then a change to all its files, are committed as
// `git add -A` of the same tree commits them, on busybox and Debian. The
// move takes its files from the index where git would store the same bytes
// at the new path (plain files) and sends the rest again (a CR under
// text=auto there; ident files, whose copy in /src git expanded; LFS files,
// stored through the clean filter). The change of all 300 files stores the
// plain ones through fast-import (a pack appears) and the rest as before.
func TestMatrixMovedDirectoryIsWhatGitAddCommits(t *testing.T) {
	for _, image := range shellImages[:2] {
		t.Run(imageName(image), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbit"))
			files := testenv.Files{".gitattributes": "moved/cr/** text=auto\n*.id ident\n*.bin filter=lfs diff=lfs merge=lfs -text\n"}
			for i := range 200 {
				files[fmt.Sprintf("d/p%d/%d.txt", i%10, i)] = fmt.Sprintf("plain %d\n", i)
			}
			for i := range 30 {
				files[fmt.Sprintf("d/cr/%d.txt", i)] = fmt.Sprintf("crlf %d\r\n", i)
				files[fmt.Sprintf("d/id/%d.id", i)] = fmt.Sprintf("$Id$ %d\n", i)
				files[fmt.Sprintf("d/lfs/%d.bin", i)] = fmt.Sprintf("binary\x00%d", i)
			}
			testenv.NewRepo(t, dir, testenv.Files{"README.md": "moves\n"})
			testenv.Git(t, dir, "lfs", "install", "--local")
			for p, body := range files {
				if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(dir, p), body)
			}
			testenv.Git(t, dir, "add", "-A")
			testenv.Git(t, dir, "commit", "-q", "-m", "files")
			m := imageManager(t, dir, image)
			if _, err := m.Create(context.Background(), create.CreateOptions{Name: "work"}); err != nil {
				t.Fatal(err)
			}
			host := filepath.Join(t.TempDir(), "host")
			testenv.Git(t, m.Repo.Root, "worktree", "add", "-q", "--detach", host, "HEAD")
			t.Cleanup(func() { testenv.Git(t, m.Repo.Root, "worktree", "remove", "--force", host) })
			// Each step in the sandbox, the same on the host, and the trees
			// compared.
			step := func(cmd string) {
				t.Helper()
				if res := bash(t, m, cmd); res.Snapshot == "" {
					t.Fatalf("%q was not committed: %+v", cmd, res)
				}
				if _, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "sh", Args: []string{"-c", cmd}, Dir: host}); err != nil {
					t.Fatalf("%q on the host: %v", cmd, err)
				}
				testenv.Git(t, host, "add", "-A")
				want := testenv.Git(t, host, "write-tree")
				if got := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work^{tree}"); got != want {
					t.Errorf("after %q the branch's tree is %s, git add's %s:\n%s", cmd, got, want, testenv.Git(t, m.Repo.Root, "diff", "--stat", want, "litterbox/work"))
				}
			}
			step("mv d moved")
			if got := testenv.Git(t, m.Repo.Root, "cat-file", "-s", "litterbox/work:moved/cr/1.txt"); got != "7" {
				t.Errorf("moved/cr/1.txt is %s bytes; want 7, normalized", got)
			}
			if got := show(t, m, "moved/lfs/1.bin"); !strings.HasPrefix(got, "version https://git-lfs.github.com/spec/v1") {
				t.Errorf("moved/lfs/1.bin committed as %q, not an LFS pointer", got)
			}
			packs := func() int {
				p, _ := filepath.Glob(filepath.Join(m.Repo.Root, ".git", "objects", "pack", "*.pack"))
				return len(p)
			}
			before := packs()
			step(`find moved -type f | while read -r f; do echo more >> "$f"; done`)
			if packs() != before+1 {
				t.Errorf("packs %d, then %d: the change's plain files did not go through fast-import", before, packs())
			}
			if got := show(t, m, "moved/lfs/2.bin"); !strings.HasPrefix(got, "version https://git-lfs.github.com/spec/v1") {
				t.Errorf("moved/lfs/2.bin committed as %q, not an LFS pointer", got)
			}
		})
	}
}
