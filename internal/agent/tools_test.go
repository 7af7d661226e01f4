//go:build linux

package agent_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/milestone"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/sandbox/sandboxtest"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/internal/textedit"
)

// The agent's tools over the in-memory provider: the real helper and the
// real git, no engine. The engine's own part (a call killed in the
// container, a restart, docker calls per call) is in the sandbox package's
// integration tests.

// toolSandbox makes a repository with a sandbox "work" in it.
func toolSandbox(t *testing.T) *sandbox.Manager {
	t.Helper()
	m, _ := sandboxtest.Sandbox(t, "work", nil)
	return m
}

func bash(t *testing.T, m *sandbox.Manager, cmd string) *result.Act {
	t.Helper()
	res, err := m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: cmd})
	if err != nil {
		t.Fatalf("bash %q: %v", cmd, err)
	}
	return res
}

// tree lists the branch tip as "mode path" lines.
func tree(t *testing.T, m *sandbox.Manager) string {
	return testenv.Git(t, m.Repo.Root, "ls-tree", "-r", "--format=%(objectmode) %(path)", "litterbox/work")
}

func show(t *testing.T, m *sandbox.Manager, path string) string {
	return testenv.Git(t, m.Repo.Root, "show", "litterbox/work:"+path)
}

func commits(t *testing.T, m *sandbox.Manager) int {
	var n int
	fmt.Sscan(testenv.Git(t, m.Repo.Root, "rev-list", "--count", "litterbox/work"), &n)
	return n
}

func one(old, new string, all bool) []textedit.Op {
	return []textedit.Op{{Old: old, New: new, ReplaceAll: all}}
}

func errorAs[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

func TestSnapshotsEveryKindOfChange(t *testing.T) {
	m := toolSandbox(t)
	before := commits(t, m)
	res := bash(t, m, `set -e
echo changed > README.md
rm src/main.go
mv "docs/a b/c.txt" docs/renamed.txt
chmod +x README.md
ln -s README.md link
: > empty && echo now-full > empty
mkdir -p new/deep/dir && echo x > new/deep/dir/file
mkdir -p node_modules/pkg && echo dep > node_modules/pkg/index.js`)
	if res.ExitCode != 0 || res.Snapshot == "" {
		t.Fatalf("bash: %+v", res)
	}
	if n := commits(t, m); n != before+1 {
		t.Errorf("%d commits for one call", n-before)
	}
	want := strings.Join([]string{
		"100644 .gitignore", "100644 .hidden/config", "100755 README.md", "100644 docs/renamed.txt",
		"100644 empty", "120000 link", "100644 new/deep/dir/file", "100755 scripts/run.sh",
	}, "\n")
	if got := tree(t, m); got != want {
		t.Errorf("tree:\n%s\nwant:\n%s", got, want)
	}
	if got := show(t, m, "link"); got != "README.md" {
		t.Errorf("symlink target %q", got)
	}
	if got := show(t, m, "empty"); got != "now-full" {
		t.Errorf("empty file content %q", got)
	}
	msg := testenv.Git(t, m.Repo.Root, "log", "-1", "--format=%an <%ae>%n%B", "litterbox/work")
	if !strings.HasPrefix(msg, "work (litterbox) <litterbox@localhost>\nbash: set -e ...") || !strings.Contains(msg, "mkdir -p node_modules/pkg") {
		t.Errorf("commit message/author:\n%s", msg)
	}
}

func TestNoCommitWhenNothingTrackedChanged(t *testing.T) {
	m := toolSandbox(t)
	before := commits(t, m)
	for _, cmd := range []string{"true", "ls -la", "echo x > ../outside", "mkdir -p node_modules && echo a > node_modules/a", "touch README.md"} {
		if res := bash(t, m, cmd); res.Snapshot != "" {
			t.Errorf("%q made snapshot %s", cmd, res.Snapshot)
		}
	}
	if w, err := m.Agent.Write(context.Background(), "work", "README.md", []byte("# test repo\n")); err != nil || w.Snapshot != "" {
		t.Errorf("rewriting the same content: %+v %v", w, err)
	}
	if n := commits(t, m); n != before {
		t.Errorf("%d commits for calls that changed nothing", n-before)
	}
}

func TestIgnoreRulesTheAgentChanges(t *testing.T) {
	m := toolSandbox(t)
	// A rule added in the same call applies to that call.
	res := bash(t, m, "echo 'dist/' >> .gitignore && mkdir dist && echo out > dist/bundle.js && echo log > debug.log")
	if got := tree(t, m); !strings.Contains(got, "debug.log") || strings.Contains(got, "dist/") {
		t.Errorf("after adding dist/ rule (snapshot %s):\n%s", res.Snapshot, got)
	}
	// An ignored file that did not change becomes tracked once un-ignored.
	bash(t, m, "echo '*.tmp' >> .gitignore && echo keep > notes.tmp")
	if strings.Contains(tree(t, m), "notes.tmp") {
		t.Fatal("ignored notes.tmp committed")
	}
	bash(t, m, "grep -v tmp .gitignore > ../g && cat ../g > .gitignore")
	if !strings.Contains(tree(t, m), "notes.tmp") {
		t.Errorf("un-ignored notes.tmp not committed:\n%s", tree(t, m))
	}
}

func TestRacySameSecondSameSizeRewrite(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	for i, content := range []string{"aaaa\n", "bbbb\n", "cccc\n"} {
		res, err := m.Agent.Write(ctx, "work", "racy.txt", []byte(content))
		if err != nil || res.Snapshot == "" {
			t.Fatalf("write %d: %+v %v", i, res, err)
		}
		if got := show(t, m, "racy.txt"); got != strings.TrimSpace(content) {
			t.Errorf("write %d: committed %q", i, got)
		}
	}
	// The same size in the same second from bash, right after a snapshot.
	bash(t, m, "printf 'dddd\\n' > racy.txt")
	if got := show(t, m, "racy.txt"); got != "dddd" {
		t.Errorf("bash rewrite: committed %q", got)
	}
}

func TestHostUntouched(t *testing.T) {
	m := toolSandbox(t)
	if err := os.WriteFile(filepath.Join(m.Repo.Root, "README.md"), []byte("host edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, m.Repo.Root, "add", "README.md")
	if err := os.WriteFile(filepath.Join(m.Repo.Root, "src/main.go"), []byte("unstaged host edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	status := testenv.Git(t, m.Repo.Root, "status", "--porcelain")
	head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")
	staged := testenv.Git(t, m.Repo.Root, "diff", "--cached")
	bash(t, m, "echo agent > README.md && echo agent > new.txt && rm src/main.go")
	if _, err := milestone.Make(context.Background(), m.Repo, "work", "agent work"); err != nil {
		t.Fatal(err)
	}
	if s := testenv.Git(t, m.Repo.Root, "status", "--porcelain"); s != status {
		t.Errorf("status changed:\n%s\nwas:\n%s", s, status)
	}
	if h := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD"); h != head {
		t.Error("HEAD moved")
	}
	if d := testenv.Git(t, m.Repo.Root, "diff", "--cached"); d != staged {
		t.Error("index changed")
	}
	if b, _ := os.ReadFile(filepath.Join(m.Repo.Root, "src/main.go")); string(b) != "unstaged host edit\n" {
		t.Errorf("host work tree changed: %q", b)
	}
}

func TestBranchMovedBehindOurBackIsNotOverwritten(t *testing.T) {
	m := toolSandbox(t)
	bash(t, m, "echo one > one.txt")
	// The user commits on the sandbox branch directly.
	tip := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work")
	treeID := testenv.Git(t, m.Repo.Root, "rev-parse", tip+"^{tree}")
	user := testenv.Git(t, m.Repo.Root, "commit-tree", treeID, "-p", tip, "-m", "user commit")
	testenv.Git(t, m.Repo.Root, "update-ref", "refs/heads/litterbox/work", user, tip)
	res := bash(t, m, "echo two > two.txt")
	if res.Snapshot == "" {
		t.Fatal("no snapshot")
	}
	if parent := testenv.Git(t, m.Repo.Root, "rev-parse", res.Snapshot+"^"); parent != user {
		t.Errorf("snapshot parent %s, want the user's commit %s", parent, user)
	}
	if got := tree(t, m); !strings.Contains(got, "one.txt") || !strings.Contains(got, "two.txt") {
		t.Errorf("tree:\n%s", got)
	}
}

func TestReadSlicesAndRefusesHidden(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	bash(t, m, "seq 1 10 > ten.txt")
	r, err := m.Agent.Read(ctx, "work", "ten.txt", 2, 3)
	if err != nil || r.Content != "3\n4\n5\n" || r.TotalLines != 10 || !r.Truncated || r.Lines != 3 {
		t.Errorf("slice: %+v %v", r, err)
	}
	r, err = m.Agent.Read(ctx, "work", "/src/ten.txt", 8, 0)
	if err != nil || r.Content != "9\n10\n" || r.Truncated {
		t.Errorf("tail: %+v %v", r, err)
	}
	for _, p := range []string{".gitignore", ".hidden/config", "docs/../.hidden/config"} {
		if _, err := m.Agent.Read(ctx, "work", p, 0, 0); !errorAs[*agent.HiddenPathError](err) {
			t.Errorf("read %s: %v, want HiddenPathError", p, err)
		}
	}
	if _, err := m.Agent.Read(ctx, "work", "nope.txt", 0, 0); !errors.Is(err, agent.ErrNoSuchFile) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := m.Agent.Read(ctx, "work", "docs", 0, 0); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Errorf("directory: %v", err)
	}
}

func TestEditAndPatch(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	e, err := m.Agent.Edit(ctx, "work", "src/main.go", one("func main() {}", "func main() { println(1) }", false))
	if err != nil || e.Replacements != 1 || e.Snapshot == "" || !strings.Contains(show(t, m, "src/main.go"), "println(1)") {
		t.Fatalf("edit: %+v %v", e, err)
	}
	if msg := testenv.Git(t, m.Repo.Root, "log", "-1", "--format=%s", "litterbox/work"); msg != "edit: src/main.go" {
		t.Errorf("message %q", msg)
	}
	before := commits(t, m)
	if _, err := m.Agent.Edit(ctx, "work", "src/main.go", one("no such text", "x", false)); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing old_string: %v", err)
	}
	if n := commits(t, m); n != before {
		t.Errorf("an edit that found nothing made %d commits", n-before)
	}
	bash(t, m, "printf 'x\\nx\\n' > two.txt")
	before = commits(t, m)
	if _, err := m.Agent.Edit(ctx, "work", "two.txt", one("x", "y", false)); err == nil || !strings.Contains(err.Error(), "2 times") {
		t.Errorf("ambiguous: %v", err)
	}
	if e, err := m.Agent.Edit(ctx, "work", "two.txt", one("x", "y", true)); err != nil || e.Replacements != 2 {
		t.Errorf("replace_all: %+v %v", e, err)
	}
	if _, err := m.Agent.Edit(ctx, "work", "nope.txt", one("a", "b", false)); !errors.Is(err, agent.ErrNoSuchFile) {
		t.Errorf("missing file: %v", err)
	}
	if n := commits(t, m); n != before+1 {
		t.Errorf("failed edits made commits: %d", n-before-1)
	}

	p, err := m.Agent.Patch(ctx, "work", "README.md", "--- a/README.md\n+++ b/README.md\n@@ -1 +1,2 @@\n # test repo\n+patched\n")
	if err != nil || p.Snapshot == "" || show(t, m, "README.md") != "# test repo\npatched" {
		t.Fatalf("patch: %+v %v", p, err)
	}
	before = commits(t, m)
	if _, err := m.Agent.Patch(ctx, "work", "README.md", "@@ -1 +1 @@\n-not there\n+x\n"); err == nil || !strings.Contains(err.Error(), "does not apply") {
		t.Errorf("bad patch: %v", err)
	}
	if show(t, m, "README.md") != "# test repo\npatched" || commits(t, m) != before {
		t.Error("a patch that does not apply changed something")
	}
	if p, err := m.Agent.Patch(ctx, "work", "made.txt", "--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1 @@\n+made\n"); err != nil || !p.Created || show(t, m, "made.txt") != "made" {
		t.Errorf("create: %+v %v", p, err)
	}
	if p, err := m.Agent.Patch(ctx, "work", "made.txt", "--- a/made.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-made\n"); err != nil || !p.Deleted || strings.Contains(tree(t, m), "made.txt") {
		t.Errorf("delete: %+v %v", p, err)
	}
}

func TestLsGlobGrepLeaveHiddenOut(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	entries, _, err := m.Agent.Ls(ctx, "work", "", false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Path+":"+e.Type)
	}
	if got := strings.Join(slices.Sorted(slices.Values(names)), ","); got != "README.md:file,docs:dir,scripts:dir,src:dir" {
		t.Errorf("ls: %s", got)
	}
	all, _, _ := m.Agent.Ls(ctx, "work", ".", true)
	for _, e := range all {
		if strings.Contains(e.Path, "/.") || strings.HasPrefix(e.Path, ".") {
			t.Errorf("recursive ls shows hidden %s", e.Path)
		}
	}
	paths, _, err := m.Agent.Glob(ctx, "work", "**/*.sh", "")
	if err != nil || strings.Join(paths, ",") != "scripts/run.sh" {
		t.Errorf("glob: %v %v", paths, err)
	}
	if paths, _, _ := m.Agent.Glob(ctx, "work", "**", ""); len(paths) != 4 {
		t.Errorf("glob ** found %v (hidden files must be left out)", paths)
	}
	matches, _, err := m.Agent.Grep(ctx, "work", "test|hidden", "", "")
	if err != nil || len(matches) != 1 || matches[0].Path != "README.md" || matches[0].Line != 1 {
		t.Errorf("grep: %+v %v", matches, err)
	}
	if matches, _, _ := m.Agent.Grep(ctx, "work", "echo", "", "*.sh"); len(matches) != 1 || matches[0].Path != "scripts/run.sh" {
		t.Errorf("grep include: %+v", matches)
	}
	if _, _, err := m.Agent.Grep(ctx, "work", "a(", "", ""); err == nil {
		t.Error("bad regex accepted")
	}
	if _, _, err := m.Agent.Ls(ctx, "work", ".hidden", false); !errorAs[*agent.HiddenPathError](err) {
		t.Errorf("ls of hidden dir: %v", err)
	}
}

func TestMilestoneSquashes(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	base := testenv.Git(t, m.Repo.Root, "rev-parse", "main")
	for i := range 3 {
		bash(t, m, fmt.Sprintf("echo %d > f%d.txt", i, i))
	}
	tipTree := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work^{tree}")
	ms, err := milestone.Make(ctx, m.Repo, "work", "Three files")
	if err != nil || ms.Squashed != 3 {
		t.Fatalf("milestone: %+v %v", ms, err)
	}
	if got := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work^{tree}"); got != tipTree {
		t.Error("milestone changed the tree")
	}
	if parent := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work^"); parent != base {
		t.Errorf("milestone parent %s, want base %s", parent, base)
	}
	if _, err := milestone.Make(ctx, m.Repo, "work", "again"); err == nil {
		t.Error("empty milestone accepted")
	}
	bash(t, m, "echo 4 > f4.txt")
	bash(t, m, "echo 5 > f5.txt")
	ms2, err := milestone.Make(ctx, m.Repo, "work", "Two more")
	if err != nil || ms2.Squashed != 2 {
		t.Fatalf("second milestone: %+v %v", ms2, err)
	}
	if log := testenv.Git(t, m.Repo.Root, "log", "--format=%s", "main..litterbox/work"); log != "Two more\nThree files" {
		t.Errorf("log:\n%s", log)
	}
	if res := bash(t, m, "echo 6 > f6.txt"); res.Snapshot == "" {
		t.Error("snapshot after milestone failed")
	}
}

func TestToolsOnMissingAndPausedSandboxes(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	if _, err := m.Agent.Bash(ctx, "nope", agent.BashOptions{Command: "true"}); !errorAs[*hostrepo.NotFoundError](err) {
		t.Errorf("bash on unknown sandbox: %v", err)
	}
	if _, err := m.Agent.Read(ctx, "nope", "README.md", 0, 0); !errorAs[*hostrepo.NotFoundError](err) {
		t.Errorf("read on unknown sandbox: %v", err)
	}
	if _, err := m.Pause(ctx, "work"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Agent.Write(ctx, "work", "x", []byte("x")); err == nil || !strings.Contains(err.Error(), "paused") {
		t.Errorf("write on paused sandbox: %v", err)
	}
	if _, err := m.Resume(ctx, "work"); err != nil {
		t.Fatal(err)
	}
	if res := bash(t, m, "echo back > back.txt"); res.Snapshot == "" {
		t.Error("no snapshot after resume")
	}
}

func TestUnIgnoringASkippedDirectoryCommitsItInTheSameCall(t *testing.T) {
	m := toolSandbox(t)
	bash(t, m, "echo 'dist/' >> .gitignore && mkdir -p dist/sub && echo o > dist/o.js && echo p > dist/sub/p.js")
	bash(t, m, "true") // dist/ is now skipped by scans
	if st, _ := m.Repo.LoadSnap("work"); strings.Join(st.Prune, ",") != "dist" {
		t.Fatalf("prune list %v, want [dist]", st.Prune)
	}
	bash(t, m, "printf 'node_modules/\\n*.map\\n' > .gitignore && echo m > dist/o.js.map")
	got := tree(t, m)
	if !strings.Contains(got, "dist/o.js") || !strings.Contains(got, "dist/sub/p.js") || strings.Contains(got, ".map") {
		t.Errorf("after un-ignoring dist/:\n%s", got)
	}
	if st, _ := m.Repo.LoadSnap("work"); len(st.Prune) != 0 {
		t.Errorf("prune list %v, want empty", st.Prune)
	}
}

// A directory made empty in one call, and a file written in it by the
// next: PID 1 names only the new directory then, and the scan must know
// it from the first call's manifest to read it.
func TestFileInADirectoryMadeEmptyIsCommitted(t *testing.T) {
	m := toolSandbox(t)
	if res := bash(t, m, "mkdir -p pkg/deep"); res.Snapshot != "" {
		t.Fatalf("empty directories committed: %+v", res)
	}
	res := bash(t, m, "echo x > pkg/deep/a.go")
	if res.Snapshot == "" || !strings.Contains(tree(t, m), "pkg/deep/a.go") {
		t.Fatalf("a file in a directory made by the call before was not committed: %+v\n%s", res, tree(t, m))
	}
}
