//go:build integration

package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// transferAttacks are the attack table's rows for host-side writes and base refs (issue 27, items 5-6).
var transferAttacks = []attack{
	{name: "download leaves a link, then the sandbox makes it a directory of mode 777", side: "agent", expect: "the second download is refused naming DEST/d; the link's target keeps its mode and files", run: func(t *testing.T, e *attackEnv) {
		downloadThroughAPlantedLink(t, e, "work", "d", "rm dl/d && mkdir dl/d && chmod 777 dl/d && echo theirs > dl/d/secret && chmod 777 dl/d/secret", nil)
	}},
	{name: "download leaves a link, then the sandbox writes under it", side: "agent", expect: "the second download is refused naming DEST/d, before any change; nothing lands beside the link's target", run: func(t *testing.T, e *attackEnv) {
		downloadThroughAPlantedLink(t, e, "work", "d", "rm dl/d && mkdir -p dl/d/sub && echo theirs > dl/d/sub/new && chmod -R 777 dl/d", nil)
	}},
	{name: "download leaves a link, the sandbox writes under it and stops for being idle", side: "agent", expect: "the download that wakes the sandbox (the CLI's, through the handle) is refused naming DEST/d, before any change; nothing lands beside the link's target", run: func(t *testing.T, e *attackEnv) {
		napper(t, e, "dlnap")
		downloadThroughAPlantedLink(t, e, "dlnap", "d", "rm dl/d && mkdir -p dl/d/sub && echo theirs > dl/d/sub/new && chmod -R 777 dl/d", func() { awaitIdle(t, e, "dlnap") })
		if st := status(t, e, "dlnap"); st != create.StatusActive {
			t.Errorf("after the refused download the sandbox is %s, want it woken", st)
		}
	}},
	{name: "the host's copy into /src through the helper (gVisor, Kubernetes) meets links the agent planted", side: "agent", gvisor: true, expect: "an entry under a link to a directory outside /src is refused and nothing lands there; a file over a link replaces the link, never its target; no setuid bit is applied", run: func(t *testing.T, e *attackEnv) {
		helperCopyThroughPlantedLinks(t, e)
	}},
	{name: "base_ref into the stash, reflog, records, a dangling commit or another's sandbox", side: "agent", expect: "each is refused naming the ref and what may be used; nothing is created; a tag, a branch and a reachable commit id work", run: func(t *testing.T, e *attackEnv) {
		baseRefAttack(t, e)
	}},
	{name: "names a clone on Windows or macOS reads as .git", side: "agent", expect: "none of .git., '.git ', GIT~1, .git::$INDEX_ALLOCATION or .git with a zero-width joiner reaches the branch (git's verify_path refuses them there); the rest of the call is committed", run: func(t *testing.T, e *attackEnv) {
		script := `for d in .git. '.git ' GIT~1 '.git::$INDEX_ALLOCATION' "$(printf '\342\200\214.git')"; do mkdir -p "$d/hooks" && echo 'echo pwned' > "$d/hooks/post-checkout" && echo '[core]' > "$d/config"; done; echo ok > ok-dotgit.txt`
		res := bash(t, e.m, script)
		got := tree(t, e.m)
		if !strings.Contains(got, "ok-dotgit.txt") {
			t.Fatalf("the rest of the call was not committed: exit %d, stderr %q, tree %q", res.ExitCode, res.Stderr, got)
		}
		for _, line := range strings.Split(got, "\n") {
			if strings.Contains(line, "hooks/post-checkout") || strings.Contains(line, "/config") {
				t.Errorf("the branch holds %q", line)
			}
		}
		bash(t, e.m, "rm -rf .git. '.git ' GIT~1 '.git::$INDEX_ALLOCATION' \"$(printf '\\342\\200\\214.git')\" ok-dotgit.txt")
	}},
	{name: "names that read as fast-import commands, and names differing only in case on a host that ignores case", side: "agent", expect: "each file is committed under its own name and no other path changes (README.md stays, nothing under .git); removing case-fold leaves Case-fold", run: func(t *testing.T, e *attackEnv) {
		// The commit is one fast-import stream built from the agent's
		// names; a clone on macOS or Windows has core.ignorecase set.
		// (Not "up": the symlinks row leaves a link of that name.)
		testenv.Git(t, e.m.Repo.Root, "config", "core.ignorecase", "true")
		defer testenv.Git(t, e.m.Repo.Root, "config", "--unset", "core.ignorecase")
		names := []string{"inj\"\nD README.md\nM 100644 inline evil\nz", `"lead`, `back\slash`, "Case-fold", "case-fold"}
		before := treeNames(t, e.m)
		res := bash(t, e.m, `printf 1 > "$(printf 'inj"\nD README.md\nM 100644 inline evil\nz')" && printf 2 > '"lead' && printf 3 > 'back\slash' && printf 4 > Case-fold && printf 5 > case-fold`)
		if got, want := treeNames(t, e.m), append(slices.Clone(before), names...); !sameSet(got, want) {
			t.Logf("exit %d, stderr %q, withheld %+v, snapshot %q", res.ExitCode, res.Stderr, res.Withheld, res.Snapshot)
			t.Fatalf("the branch holds %q, want %q", got, want)
		}
		bash(t, e.m, "rm case-fold")
		if got, want := treeNames(t, e.m), append(slices.Clone(before), names[:4]...); !sameSet(got, want) {
			t.Errorf("after rm case-fold the branch holds %q, want %q", got, want)
		}
		bash(t, e.m, `rm -f inj* '"lead' 'back\slash' Case-fold`)
	}},
	{name: "the helper program overwritten, moved or shadowed from inside the sandbox", side: "agent", expect: "every write under /.litterbox is refused; the copy stays the delivered program, byte for byte; a fake litterbox-helper on the agent's PATH is never run; the next call commits its change and nothing else", run: func(t *testing.T, e *attackEnv) {
		// The helper is its own program now, copied in by the host into
		// the container's own volume: the agent's uid must not be able to
		// put another one in its place, and the host runs it by its
		// absolute path only.
		fake := `printf '#!/bin/sh\ntouch /src/pwned-by-fake-helper\n'`
		res := bash(t, e.m, `h=$(ls -d /.litterbox/*/litterbox-helper); d=$(dirname "$h")
`+fake+` > "$h" && echo WROTE-over
`+fake+` > "$h.new" && mv -f "$h.new" "$h" && echo WROTE-moved
mv -f "$h" /tmp/h && echo WROTE-away
ln -sf /bin/sh "$d/lib" && echo WROTE-link
mkdir /.litterbox/fake && echo WROTE-dir
chmod 777 "$h" && echo WROTE-mode
mkdir -p "$HOME/bin" /tmp/bin && for f in "$HOME/bin/litterbox-helper" /tmp/bin/litterbox-helper /tmp/litterbox-helper; do `+fake+` > "$f"; chmod +x "$f"; done
true`)
		if strings.Contains(res.Stdout, "WROTE") {
			t.Errorf("the agent changed /.litterbox: %q", res.Stdout)
		}
		sum := func() string {
			t.Helper()
			out, err := testenv.Docker("exec", e.m.Repo.Names("work").Container, "sh", "-c", "sha256sum /.litterbox/*/litterbox-helper | cut -d' ' -f1")
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			return strings.TrimSpace(out)
		}
		delivered, err := os.ReadFile(os.Getenv(helperbin.Env))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := sum(), fmt.Sprintf("%x", sha256.Sum256(delivered)); got != want {
			t.Errorf("the sandbox's helper is %s, the delivered program %s", got, want)
		}
		after := bash(t, e.m, `PATH="$HOME/bin:/tmp/bin:/tmp:$PATH"; export PATH; echo after > helper-after.txt`)
		if after.Snapshot == "" || testenv.Git(t, e.m.Repo.Root, "show", "--name-only", "--format=", after.Snapshot) != "helper-after.txt" {
			t.Errorf("the call after: %+v", after)
		}
		if names := treeNames(t, e.m); slices.Contains(names, "pwned-by-fake-helper") {
			t.Errorf("a fake helper ran: the branch holds %q", names)
		}
		if out := exec(t, e.m, "work", "ls /src"); strings.Contains(out, "pwned") {
			t.Errorf("a fake helper ran: /src holds %q", out)
		}
		bash(t, e.m, `rm -rf helper-after.txt "$HOME/bin" /tmp/bin /tmp/litterbox-helper`)
	}},
	{name: "the helper's manifests in /tmp/.litterbox overwritten between calls", side: "agent", expect: "the next call reads none (a full scan), commits the change, and the branch holds exactly the sandbox's files", run: func(t *testing.T, e *attackEnv) {
		// /tmp/.litterbox is the agent's uid's: any process of its can
		// rewrite what the helper compares with.
		bash(t, e.m, "echo one > manifest-a.txt")
		if out, err := testenv.Docker("exec", "--user", "1000:1000", e.m.Repo.Names("work").Container, "sh", "-c",
			`for f in /tmp/.litterbox/m.*; do head -c 100 "$f" > /tmp/cut && cat /tmp/cut > "$f" && printf '\377\377\377\377\017' >> "$f"; done; rm -f /tmp/cut`); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		before := treeNames(t, e.m)
		res := bash(t, e.m, "echo two > manifest-b.txt")
		if res.Snapshot == "" || !slices.Contains(treeNames(t, e.m), "manifest-b.txt") {
			t.Fatalf("the change was not committed: %+v", res)
		}
		if got, want := treeNames(t, e.m), append(slices.Clone(before), "manifest-b.txt"); !sameSet(got, want) {
			t.Errorf("the branch holds %q, want %q", got, want)
		}
		bash(t, e.m, "rm -f manifest-a.txt manifest-b.txt")
	}},
	{name: "a well-formed manifest forged in /tmp/.litterbox, naming ../host-owned", side: "agent", expect: "no file beside the repository is touched and the branch names nothing outside it; the next call commits the sandbox's changes", run: func(t *testing.T, e *attackEnv) {
		// The manifest is the agent's to write, records and all: one
		// record of /src's root holding a regular file ../host-owned,
		// which the next scan finds gone and reports removed.
		sentinel := filepath.Join(filepath.Dir(e.m.Repo.Root), "host-owned")
		if err := os.WriteFile(sentinel, []byte("host\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(sentinel)
		before := treeNames(t, e.m)
		if out, err := testenv.Docker("exec", "--user", "1000:1000", e.m.Repo.Names("work").Container, "sh", "-c",
			`{ printf 'LBXM3\n\000\000\107\015../host-owned\244\201\000\000'; head -c 53 /dev/zero; } > /tmp/forged && `+
				`for f in /tmp/.litterbox/m.*; do case "$f" in *.recheck) ;; *) cat /tmp/forged > "$f" ;; esac; done; rm -f /tmp/forged`); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		_, err := e.m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: "echo forged > manifest-forged.txt"})
		t.Logf("the call after the forgery: %v", err)
		if data, err := os.ReadFile(sentinel); err != nil || string(data) != "host\n" {
			t.Errorf("the file beside the repository: %q %v", data, err)
		}
		for _, n := range treeNames(t, e.m) {
			if strings.Contains(n, "..") || strings.Contains(n, "host-owned") {
				t.Errorf("the branch names %q", n)
			}
		}
		after := bash(t, e.m, "echo after > manifest-after.txt")
		names := treeNames(t, e.m)
		if after.Snapshot == "" || !slices.Contains(names, "manifest-after.txt") || !slices.Contains(names, "manifest-forged.txt") {
			t.Errorf("the call after: %+v, the branch holds %q", after, names)
		}
		if want := append(slices.Clone(before), "manifest-forged.txt", "manifest-after.txt"); !sameSet(names, want) {
			t.Errorf("the branch holds %q, want %q", names, want)
		}
		bash(t, e.m, "rm -f manifest-forged.txt manifest-after.txt")
	}},
	{name: "a 4,088-byte path", side: "agent", expect: "the call commits the rest and names the path with how to remove or ignore it; later calls commit", run: func(t *testing.T, e *attackEnv) {
		// 15 directories of 255-byte names and a 248-byte file name: legal
		// in the container, past PATH_MAX under the host's .git.
		// (/src/ and the path: 4,093 bytes, within the container's PATH_MAX.)
		script := "for i in 1 2 3 4 5 6 7 8 9 a b c d e f; do d=L$(printf '%0253d' 0)$i; mkdir $d && cd $d; done && printf x > $(printf '%0248d' 0) && cd /src && echo ok > ok-long.txt"
		res := bash(t, e.m, script)
		if len(res.Withheld) != 1 || res.Withheld[0].Limit != "path-length" || len(res.Withheld[0].Path) != 4088 {
			t.Fatalf("withheld %+v, want the 4,088-byte path L000...; exit %d, stderr %q", res.Withheld, res.ExitCode, res.Stderr)
		}
		notes := strings.Join(res.Notes(), "\n")
		for _, want := range []string{"L0000", "is a path of 4088 bytes", "Delete or rename it in the sandbox", ".gitignore"} {
			if !strings.Contains(notes, want) {
				t.Errorf("notes %q lack %q", notes, want)
			}
		}
		t.Logf("note: %s", notes)
		if res.Snapshot == "" || !strings.Contains(tree(t, e.m), "ok-long.txt") {
			t.Errorf("the rest of the call was not committed: %q", res.Snapshot)
		}
		if res := bash(t, e.m, "echo later > later-long.txt"); res.Snapshot == "" || len(res.Withheld) != 0 {
			t.Errorf("a later call: commit %q, withheld %+v", res.Snapshot, res.Withheld)
		}
		bash(t, e.m, "rm -rf L0000*")
	}},
	{name: "a call's scan while a background process swaps the directory of a changed file for a link to /etc, and .gitignore for a fifo, in a loop", side: "agent", gvisor: true, expect: "the scan reads the files it sends, hashes and rule files through a root of /src, and opens only what is still a regular file: no commit holds /etc's files under /src's names (d/passwd is the agent's, or d a link), and no read waits on the fifo: every call ends within 30 s", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := freshRepo(t, e, "")
		if _, err := r.Create(ctx, create.CreateOptions{Name: "src"}); err != nil {
			t.Fatal(err)
		}
		exec(t, r, "src", "mkdir -p /src/d && echo mine > /src/d/passwd && echo 'dist/' > /src/.gitignore")
		// Two loops, so that each swaps as fast as it can.
		for name, swap := range map[string]string{
			"links": `cd /src && n=0 && while :; do mv d d.x; ln -s /etc d; rm d; mv d.x d; n=$((n+1)); echo $n > /tmp/links; done`,
			"fifos": `cd /src && n=0 && while :; do mv .gitignore g.x; mkfifo .gitignore; rm .gitignore; mv g.x .gitignore; n=$((n+1)); echo $n > /tmp/fifos; done`,
		} {
			if _, err := servicectl.Background(ctx, r.Repo, "src", name, agent.BashOptions{Command: swap}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 20 {
			start := time.Now()
			if _, err := r.Agent.Bash(ctx, "src", agent.BashOptions{Command: fmt.Sprintf("for f in d/passwd d.x/passwd; do echo mine%d > $f; done 2>/dev/null; true", i)}); err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("call %d took %v: a read waited on the fifo", i, took)
			}
		}
		// Every commit the calls made, those of the changes between calls
		// (the swapper's) too.
		commits := strings.Fields(testenv.Git(t, r.Repo.Root, "rev-list", "litterbox/src"))
		linked := 0
		for _, c := range commits {
			for _, line := range strings.Split(testenv.Git(t, r.Repo.Root, "ls-tree", "-r", "--format=%(objectmode) %(path)", c), "\n") {
				mode, p, _ := strings.Cut(line, " ")
				switch {
				case p == "d" && mode == "120000":
					linked++
				case p == "d/passwd":
					if got := testenv.Git(t, r.Repo.Root, "cat-file", "blob", c+":d/passwd"); !strings.HasPrefix(got, "mine") {
						t.Fatalf("commit %s holds d/passwd as %q", c, got)
					}
				case strings.HasPrefix(p, "d/"):
					t.Fatalf("commit %s holds %s, which only /etc has", c, p)
				}
			}
		}
		swaps := strings.Fields(exec(t, r, "src", "cat /tmp/links /tmp/fifos"))
		if t.Logf("swaps %v, %d commits, d a link in %d", swaps, len(commits), linked); len(commits) < 10 || len(swaps) != 2 || swaps[0] == "0" || swaps[1] == "0" {
			t.Errorf("20 calls made %d commits while the loops swapped %v times: this row tests nothing", len(commits), swaps)
		}
	}},
	{name: "an agent's program breaks PID 1's watch conversation in a loop: cuts of far generations never acknowledged, resets, unfinished questions, bytes that are no frame", side: "agent", gvisor: true, expect: "PID 1 keeps no cut its asker did not take and answers the next scan with a full one when in doubt: every call ends within 30 s and commits exactly what it wrote", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := freshRepo(t, e, "")
		if _, err := r.Create(ctx, create.CreateOptions{Name: "src"}); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(t.TempDir(), "watchforger")
		build := osexec.Command("go", "build", "-o", bin, "github.com/litterbox-dev/litterbox/e2e/watchforger")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building the forger: %v\n%s", err, out)
		}
		if _, err := r.Agent.Upload(ctx, "src", bin, "/tmp/watchforger"); err != nil {
			t.Fatal(err)
		}
		if _, err := servicectl.Background(ctx, r.Repo, "src", "forger", agent.BashOptions{Command: "/tmp/watchforger"}); err != nil {
			t.Fatal(err)
		}
		exec(t, r, "src", "for i in $(seq 100); do [ -s /tmp/forged ] && break; sleep 0.1; done; cat /tmp/forged")
		for i := range 8 {
			start := time.Now()
			res, err := r.Agent.Bash(ctx, "src", agent.BashOptions{Command: fmt.Sprintf("echo %d > f%d", i, i)})
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			if took := time.Since(start); took > 30*time.Second {
				t.Errorf("call %d took %v", i, took)
			}
			if got := testenv.Git(t, r.Repo.Root, "show", fmt.Sprintf("litterbox/src:f%d", i)); got != fmt.Sprint(i) {
				t.Errorf("call %d (commit %q): the branch holds f%d as %q", i, res.Snapshot, i, got)
			}
		}
		if forged := strings.TrimSpace(exec(t, r, "src", "cat /tmp/forged")); forged == "" || forged == "0" {
			t.Errorf("the forger broke %q conversations: this row tests nothing", forged)
		} else {
			t.Logf("the forger broke %s conversations", forged)
		}
	}},
	{name: "100k names of 240 bytes", side: "agent", expect: "no call fails on the 24 MB of names: each commits what one frame carries and says the rest waits; later calls commit all and other changes", run: func(t *testing.T, e *attackEnv) {
		r, run := roomySandbox(t, e)
		res := run("mkdir -p names && cd names && seq -w 100000 | sed \"s/^/$(printf '%0230d' 0)-/\" | xargs touch")
		waiting := len(res.Withheld) + res.WithheldMore
		if res.Snapshot == "" || waiting == 0 || !strings.Contains(strings.Join(res.Notes(), "\n"), "the next call commits them") {
			t.Fatalf("first call: commit %q, %d waiting, notes %q", res.Snapshot, waiting, res.Notes())
		}
		t.Logf("first call: %d names wait for the next", waiting)
		if res := run("echo later > later-names.txt"); res.Snapshot == "" {
			t.Errorf("a later call committed nothing: %+v", res)
		}
		got := testenv.Git(t, r.Repo.Root, "ls-tree", "-r", "--name-only", "litterbox/w")
		if all := strings.Count(got, "names/"); all != 100_000 || !strings.Contains(got, "later-names.txt") {
			t.Errorf("the branch holds %d of the 100,000 names", all)
		}
	}},
	{name: "100k new directories of 240-byte names", side: "agent", expect: "the 24 MB list of new directories crosses in several frames; the call and later calls commit, a file written in the last new directory too (its creation overflowed inotify's queue)", run: func(t *testing.T, e *attackEnv) {
		r, run := roomySandbox(t, e)
		res := run("mkdir -p dirs && cd dirs && seq -w 100000 | sed \"s/^/$(printf '%0230d' 0)-/\" | xargs mkdir && echo ok > /src/ok-dirs.txt")
		if res.Snapshot == "" {
			t.Fatalf("the call committed nothing: %+v", res)
		}
		if res := run("echo later > later-dirs.txt"); res.Snapshot == "" {
			t.Errorf("a later call committed nothing: %+v", res)
		}
		if res := run("echo inside > \"dirs/$(printf '%0230d' 0)-100000/inside.txt\""); res.Snapshot == "" {
			t.Errorf("a file in the last new directory: committed nothing: %+v", res)
		}
		if got := testenv.Git(t, r.Repo.Root, "ls-tree", "--name-only", "litterbox/w"); !strings.Contains(got, "ok-dirs.txt") || !strings.Contains(got, "later-dirs.txt") {
			t.Errorf("the branch holds %q", got)
		}
	}},
}

// downloadThroughAPlantedLink downloads dl of sandbox name (holding the
// link dl/<link> to a host directory) to DEST, lets the sandbox run
// change, runs before (when set), and downloads again through the
// sandbox's handle, as the CLI does: the host directory must keep its
// mode, files and contents, and the refusal must name DEST/<link> and
// come before any change to DEST.
func downloadThroughAPlantedLink(t *testing.T, e *attackEnv, name, link, change string, before func()) {
	ctx := context.Background()
	bash := func(cmd string) {
		t.Helper()
		if _, err := e.m.Agent.Bash(ctx, name, agent.BashOptions{Command: cmd}); err != nil {
			t.Fatalf("bash %q: %v", cmd, err)
		}
	}
	outside := filepath.Join(t.TempDir(), "users-dir")
	if err := os.Mkdir(outside, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bash("rm -rf dl && mkdir dl && ln -s " + outside + " dl/" + link)
	dest := filepath.Join(t.TempDir(), "out")
	if _, err := e.m.Agent.Download(ctx, name, "dl", dest); err != nil {
		t.Fatalf("first download: %v", err)
	}
	bash(change + " && echo late > dl/zz-late")
	if before != nil {
		before()
	}
	sb, err := e.m.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sb.Download(ctx, "dl", dest)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dest, link)) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("second download: %v, want a refusal naming %s as a symlink", err, filepath.Join(dest, link))
	}
	t.Logf("refusal: %v", err)
	if fi, err := os.Stat(outside); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the link's target: mode %v, %v; want 0700", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(secret); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the file behind the link: mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	if data, _ := os.ReadFile(secret); string(data) != "mine\n" {
		t.Errorf("the file behind the link now holds %q", data)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("the link's target holds %d entries, want 1", len(ents))
	}
	if fi, err := os.Lstat(filepath.Join(dest, link)); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("DEST/%s is no longer the link: %v %v", link, fi, err)
	}
	if _, err := os.Lstat(filepath.Join(dest, "zz-late")); err == nil {
		t.Error("the refused download wrote zz-late: the refusal came after a change")
	}
}

// baseRefAttack tries, in a repository of its own, every base ref that
// reaches what the user could not have typed for a branch of their own.
func baseRefAttack(t *testing.T, e *attackEnv) {
	ctx := context.Background()
	r := freshRepo(t, e, "")
	git := func(args ...string) string { return testenv.Git(t, r.Repo.Root, args...) }
	first := git("rev-parse", "HEAD")
	git("tag", "-a", "-m", "release", "v1")
	if err := os.WriteFile(filepath.Join(r.Repo.Root, "second.txt"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "second.txt")
	git("commit", "-q", "-m", "second")
	git("branch", "feature", first)
	git("branch", "litterbox/other", first) // a sandbox branch this caller may not touch
	// The user's private state: stashed untracked files, and a dangling
	// commit of them.
	if err := os.WriteFile(filepath.Join(r.Repo.Root, "stashed-secret.txt"), []byte("private\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("stash", "push", "-u", "-q")
	untracked := git("rev-parse", "stash@{0}^3")
	dangling := git("commit-tree", "-m", "dangling", untracked+"^{tree}")
	git("update-ref", "refs/litterbox/x/record", untracked)
	mine := func(slug string) bool { return slug == "mine" }
	refused := map[string]string{
		"stash@{0}^3": "stash", "stash": "stash", "refs/stash": "refs/stash", "HEAD@{1}": "HEAD@{1}",
		"refs/litterbox/x/record": "refs/litterbox", "litterbox/other": "sandbox 'other'",
		dangling: "no branch or tag", dangling[:10]: "no branch or tag", untracked[:12] + "~0": "no branch or tag",
		":/second": ":/second",
	}
	for ref, says := range refused {
		_, err := r.Create(ctx, create.CreateOptions{Name: "b", BaseRef: ref, MayBaseOn: mine})
		if err == nil {
			t.Errorf("base_ref %q accepted", ref)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, says) || !strings.Contains(msg, "branch, a tag") || strings.Contains(msg, "\n") {
			t.Errorf("base_ref %q: %q, want one line naming %q and what may be used", ref, msg, says)
		}
	}
	if refs := git("for-each-ref", "--format=%(refname)", "refs/heads/litterbox/"); refs != "refs/heads/litterbox/other" {
		t.Errorf("a refused base made a branch: %q", refs)
	}
	if list, err := r.List(ctx, false); err != nil || len(list) > 1 {
		t.Errorf("a refused base made a sandbox: %+v %v", list, err)
	}
	for name, ref := range map[string]string{"tag": "v1", "branch": "feature", "sha": first[:10], "walked": "main~1"} {
		c, err := r.Create(ctx, create.CreateOptions{Name: name, BaseRef: ref, MayBaseOn: mine})
		if err != nil || c.Base != first {
			t.Errorf("base_ref %q: %v, base %v, want %s", ref, err, c, first)
			continue
		}
		if out := exec(t, r, name, "ls /src"); strings.Contains(out, "stashed-secret") || strings.Contains(out, "second.txt") {
			t.Errorf("base_ref %q: /src holds %q", ref, out)
		}
	}
}

// roomySandbox is sandbox "w" of a repository of its own, with room for
// the helper's lists of 100k names: at the table's 256m the helper is
// killed for memory (a bound of its own). run is a bash call in it.
func roomySandbox(t *testing.T, e *attackEnv) (r *Manager, run func(cmd string) *result.Act) {
	t.Helper()
	r = freshRepo(t, e, "[docker]\nmemory = \"1g\"\n")
	if _, err := r.Create(context.Background(), create.CreateOptions{Name: "w"}); err != nil {
		t.Fatal(err)
	}
	return r, func(cmd string) *result.Act {
		t.Helper()
		res, err := r.Agent.Bash(context.Background(), "w", agent.BashOptions{Command: cmd})
		if err != nil {
			t.Fatalf("bash %q: %v", cmd, err)
		}
		return res
	}
}

// treeNames lists the paths of the sandbox's branch, as they are.
func treeNames(t *testing.T, m *Manager) []string {
	t.Helper()
	out := testenv.Git(t, m.Repo.Root, "ls-tree", "-r", "-z", "--name-only", "litterbox/work")
	return strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
}

// sameSet reports whether a and b hold the same strings.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// helperCopyThroughPlantedLinks runs the helper's untar, the copy into a
// sandbox under gVisor and on Kubernetes (copyIn, kubecli's CopyIn), on a
// /src where the agent planted a link to a directory of its own outside
// /src and a link to a file there, and hands it a tar that names both.
func helperCopyThroughPlantedLinks(t *testing.T, e *attackEnv) {
	bash(t, e.m, "rm -rf cpin /tmp/cpin-out && mkdir -p cpin /tmp/cpin-out && echo theirs > /tmp/cpin-out/kept && ln -s /tmp/cpin-out cpin/dir && ln -s /tmp/cpin-out/kept cpin/file")
	tarOf := func(name string, mode int64) *bytes.Buffer {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: 5}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte("host\n"))
		_ = tw.Close()
		return &buf
	}
	untar := func(name string, mode int64) error {
		spec := box.ExecSpec{Interactive: true, Cmd: e.m.Agent.Helper.Argv(protocol.CmdUntar{Dir: hostrepo.Workdir + "/cpin"})}
		res, err := e.m.Repo.Box("work").Exec(context.Background(), spec, box.Streams{Stdin: tarOf(name, mode)})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("untar exited with code %d: %s", res.ExitCode, res.Stderr)
		}
		return err
	}
	if err := untar("dir/planted", 0o644); err == nil {
		t.Error("an entry under the link to a directory outside /src was written")
	}
	if err := untar("file", 0o4755); err != nil {
		t.Fatalf("a file over a link: %v", err)
	}
	got := exec(t, e.m, "work", "ls -A /tmp/cpin-out; cat /tmp/cpin-out/kept; [ -L cpin/file ] && echo link; cat cpin/file; stat -c %a cpin/file")
	if want := "kept\ntheirs\nhost\n755\n"; got != want {
		t.Errorf("after the copies: %q, want %q (nothing new outside /src, the link's target kept, the link replaced by a file without setuid)", got, want)
	}
	bash(t, e.m, "rm -rf cpin /tmp/cpin-out")
}
