//go:build integration

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// toolSandbox makes a repository with a sandbox "work" in it.
func toolSandbox(t *testing.T) *Manager {
	t.Helper()
	m := realManager(t)
	if _, err := m.Create(context.Background(), CreateOptions{Name: "work"}); err != nil {
		t.Fatal(err)
	}
	return m
}

func bash(t *testing.T, m *Manager, cmd string) *agent.ActResult {
	t.Helper()
	res, err := m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: cmd})
	if err != nil {
		t.Fatalf("bash %q: %v", cmd, err)
	}
	return res
}

// tree lists the branch tip as "mode path" lines.
func tree(t *testing.T, m *Manager) string {
	return testenv.Git(t, m.Repo.Root, "ls-tree", "-r", "--format=%(objectmode) %(path)", "litterbox/work")
}

func show(t *testing.T, m *Manager, path string) string {
	return testenv.Git(t, m.Repo.Root, "show", "litterbox/work:"+path)
}

func commits(t *testing.T, m *Manager) int {
	var n int
	fmt.Sscan(testenv.Git(t, m.Repo.Root, "rev-list", "--count", "litterbox/work"), &n)
	return n
}

func TestIntegrationSnapshotsEveryKindOfChange(t *testing.T) {
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

func TestIntegrationNoCommitWhenNothingTrackedChanged(t *testing.T) {
	m := toolSandbox(t)
	before := commits(t, m)
	for _, cmd := range []string{"true", "ls -la", "echo x > /tmp/outside", "mkdir -p node_modules && echo a > node_modules/a", "touch README.md"} {
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

func TestIntegrationIgnoreRulesTheAgentChanges(t *testing.T) {
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
	bash(t, m, "grep -v tmp .gitignore > /tmp/g && cat /tmp/g > .gitignore")
	if !strings.Contains(tree(t, m), "notes.tmp") {
		t.Errorf("un-ignored notes.tmp not committed:\n%s", tree(t, m))
	}
}

func TestIntegrationRacySameSecondSameSizeRewrite(t *testing.T) {
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

func TestIntegrationHostUntouched(t *testing.T) {
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
	if _, err := m.Agent.Milestone(context.Background(), "work", "agent work"); err != nil {
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

func TestIntegrationBranchMovedBehindOurBackIsNotOverwritten(t *testing.T) {
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

func TestIntegrationBashTimeoutKillsEverything(t *testing.T) {
	m := toolSandbox(t)
	start := time.Now()
	res, err := m.Agent.Bash(context.Background(), "work", agent.BashOptions{
		Command: "echo started; sleep 300 & setsid sleep 301 & (sleep 302; echo late) & echo kept > kept.txt; wait",
		Timeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.Stdout != "started\n" {
		t.Errorf("result %+v", res)
	}
	if took := time.Since(start); took > 15*time.Second {
		t.Errorf("took %v", took)
	}
	if !strings.Contains(tree(t, m), "kept.txt") {
		t.Error("work done before the timeout was not committed")
	}
	if ps := bash(t, m, "ps -o args | grep -c '[s]leep 30[012]' || true").Stdout; strings.TrimSpace(ps) != "0" {
		t.Errorf("%s sleep processes survived the timeout", strings.TrimSpace(ps))
	}
}

// A long output keeps its head and its tail, where test runners print
// their summary, with the middle's size named and the whole stream saved
// in the sandbox for the agent to grep; a call may ask for more or less.
func TestIntegrationBashOutputKeepsHeadAndTail(t *testing.T) {
	m := toolSandbox(t)
	limit := config.Default().OutputLimit
	res := bash(t, m, "seq 1 100000; echo err >&2; exit 3")
	full := 0
	for i := 1; i <= 100000; i++ {
		full += len(strconv.Itoa(i)) + 1
	}
	if res.ExitCode != 3 || res.StdoutCut != int64(full)-limit || res.Stderr != "err\n" || !res.Truncated() {
		t.Errorf("exit %d stdout %d bytes cut %d stderr %q", res.ExitCode, len(res.Stdout), res.StdoutCut, res.Stderr)
	}
	marker := fmt.Sprintf("[... %s bytes elided; all of stdout is in %s ...]\n", agenttext.Thousands(int64(full)-limit), res.StdoutLog)
	if !strings.HasPrefix(res.Stdout, "1\n2\n3\n") || !strings.HasSuffix(res.Stdout, "\n99999\n100000\n") || !strings.Contains(res.Stdout, marker) {
		t.Errorf("stdout %q...%q, want the marker %q", res.Stdout[:20], res.Stdout[len(res.Stdout)-40:], marker)
	}
	if len(res.Stdout) > int(limit)+len(marker)+1 || !strings.HasPrefix(res.StdoutLog, agent.OutputDir+"/") {
		t.Errorf("kept %d bytes for a limit of %d; log %q", len(res.Stdout), limit, res.StdoutLog)
	}
	if got := bash(t, m, "wc -c < "+res.StdoutLog+"; tail -n 1 "+res.StdoutLog).Stdout; strings.Fields(got)[0] != strconv.Itoa(full) || !strings.HasSuffix(got, "\n100000\n") {
		t.Errorf("the saved stream: %q", got)
	}
	small, err := m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: "seq 1 2000", OutputLimit: 2048})
	if err != nil || small.StdoutCut == 0 || len(small.Stdout) > 2048+200 || !strings.HasSuffix(small.Stdout, "\n2000\n") {
		t.Errorf("output_limit 2048: %d bytes kept, cut %d, %v", len(small.Stdout), small.StdoutCut, err)
	}
	if _, err := m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: "true", OutputLimit: 10}); err == nil || !strings.Contains(err.Error(), "output_limit: 10 bytes is outside 1024-1048576") {
		t.Errorf("output_limit 10: %v", err)
	}
	res, err = m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: "pwd", Workdir: "docs"})
	if err != nil || res.Stdout != "/src/docs\n" {
		t.Errorf("workdir: %+v %v", res, err)
	}
	res, err = m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: "pwd", Workdir: "/nope"})
	if err != nil || res.ExitCode == 0 || !strings.Contains(res.Stderr, "/nope") {
		t.Errorf("missing workdir: %+v %v", res, err)
	}
}

func TestIntegrationReadSlicesAndRefusesHidden(t *testing.T) {
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

func TestIntegrationEditAndPatch(t *testing.T) {
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

func TestIntegrationLsGlobGrepLeaveHiddenOut(t *testing.T) {
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

func TestIntegrationMilestoneSquashes(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	base := testenv.Git(t, m.Repo.Root, "rev-parse", "main")
	for i := range 3 {
		bash(t, m, fmt.Sprintf("echo %d > f%d.txt", i, i))
	}
	tipTree := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work^{tree}")
	ms, err := m.Agent.Milestone(ctx, "work", "Three files")
	if err != nil || ms.Squashed != 3 {
		t.Fatalf("milestone: %+v %v", ms, err)
	}
	if got := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work^{tree}"); got != tipTree {
		t.Error("milestone changed the tree")
	}
	if parent := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work^"); parent != base {
		t.Errorf("milestone parent %s, want base %s", parent, base)
	}
	if _, err := m.Agent.Milestone(ctx, "work", "again"); err == nil {
		t.Error("empty milestone accepted")
	}
	bash(t, m, "echo 4 > f4.txt")
	bash(t, m, "echo 5 > f5.txt")
	ms2, err := m.Agent.Milestone(ctx, "work", "Two more")
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

func TestIntegrationDockerCallsPerToolCall(t *testing.T) {
	m := toolSandbox(t)
	counter := &runner.Counter{Inner: testenv.Exec()}
	useRunner(m, counter)
	ctx := context.Background()
	// A call that changes a file commits it with its own git processes:
	// the changed paths' entries in the branch's tree (ls-tree), whether a
	// new file is ignored (check-ignore), its blob (hash-object), the
	// commit (fast-import) and the branch's move (update-ref). The first
	// change also reads the branch's tip and tree and the user's identity.
	for _, tc := range []struct {
		name      string
		call      func() error
		want, git int
	}{
		{"bash no-op", func() error { _, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "true"}); return err }, 1, 0},
		{"bash change", func() error {
			_, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "echo 1 > a.txt"})
			return err
		}, 1, 8},
		{"write", func() error { _, err := m.Agent.Write(ctx, "work", "b.txt", []byte("b")); return err }, 1, 5},
		// One exec: the helper reads, edits and writes the file.
		{"edit", func() error { _, err := m.Agent.Edit(ctx, "work", "b.txt", one("b", "c", false)); return err }, 1, 4},
		{"read", func() error { _, err := m.Agent.Read(ctx, "work", "b.txt", 0, 0); return err }, 1, 0},
		{"grep", func() error { _, _, err := m.Agent.Grep(ctx, "work", "c", "", ""); return err }, 1, 0},
	} {
		counter.Reset()
		if err := tc.call(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if n := counter.Count("docker"); n != tc.want {
			t.Errorf("%s ran %d docker commands, want %d", tc.name, n, tc.want)
		}
		if n := counter.Count("git"); n != tc.git {
			t.Errorf("%s ran %d git commands, want %d", tc.name, n, tc.git)
		}
	}
}

func TestIntegrationConcurrentCallsLoseNothing(t *testing.T) {
	// Two Managers stand for two `litterbox mcp` processes: they share only
	// the repository, so only the flock serializes them.
	m1 := toolSandbox(t)
	m2, err := Open(context.Background(), testenv.Exec(), engine.Docker, m1.Repo.Root, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 50)
	for i := range 25 {
		for j, m := range []*Manager{m1, m2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var err error
				if i%2 == 0 {
					_, err = m.Agent.Write(ctx, "work", fmt.Sprintf("w/%d-%d.txt", j, i), []byte(fmt.Sprint(i)))
				} else {
					_, err = m.Agent.Bash(ctx, "work", agent.BashOptions{Command: fmt.Sprintf("echo %d > b-%d-%d.txt", i, j, i)})
				}
				if err != nil {
					errs <- err
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	files := 0
	for _, line := range strings.Split(tree(t, m1), "\n") {
		if strings.Contains(line, "w/") || strings.Contains(line, "b-") {
			files++
		}
	}
	if files != 50 {
		t.Errorf("%d of 50 files committed", files)
	}
	if n := testenv.Git(t, m1.Repo.Root, "rev-list", "--count", "main..litterbox/work"); n != "50" {
		t.Errorf("%s commits, want 50 (one per call)", n)
	}
}

func TestIntegrationToolsOnMissingAndPausedSandboxes(t *testing.T) {
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

func TestIntegrationUnIgnoringASkippedDirectoryCommitsItInTheSameCall(t *testing.T) {
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

func TestIntegrationDeletionAfterAContainerRestartIsCommitted(t *testing.T) {
	m := toolSandbox(t)
	bash(t, m, "echo kept > kept.txt")
	// A restart empties /tmp, where the container keeps its manifests.
	if _, err := testenv.Docker("restart", "-t", "1", m.Repo.Names("work").Container); err != nil {
		t.Fatal(err)
	}
	res := bash(t, m, "rm README.md scripts/run.sh")
	if res.Snapshot == "" {
		t.Fatal("no snapshot for deletions after a restart")
	}
	got := tree(t, m)
	if strings.Contains(got, "README.md") || strings.Contains(got, "run.sh") || !strings.Contains(got, "kept.txt") {
		t.Errorf("tree after restart and rm:\n%s", got)
	}
	if n := testenv.Git(t, m.Repo.Root, "diff", "--name-status", res.Snapshot+"^", res.Snapshot); n != "D\tREADME.md\nD\tscripts/run.sh" {
		t.Errorf("snapshot changed:\n%s", n)
	}
}

// A directory made empty in one call, and a file written in it by the
// next: PID 1 names only the new directory then, and the scan must know
// it from the first call's manifest to read it.
func TestIntegrationFileInADirectoryMadeEmptyIsCommitted(t *testing.T) {
	m := toolSandbox(t)
	if res := bash(t, m, "mkdir -p pkg/deep"); res.Snapshot != "" {
		t.Fatalf("empty directories committed: %+v", res)
	}
	res := bash(t, m, "echo x > pkg/deep/a.go")
	if res.Snapshot == "" || !strings.Contains(tree(t, m), "pkg/deep/a.go") {
		t.Fatalf("a file in a directory made by the call before was not committed: %+v\n%s", res, tree(t, m))
	}
}
