//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// toolSandbox makes a repository with a sandbox "work" in it.
func toolSandbox(t *testing.T) *Manager {
	t.Helper()
	m := realManager(t)
	if _, err := m.Create(context.Background(), create.CreateOptions{Name: "work"}); err != nil {
		t.Fatal(err)
	}
	return m
}

func bash(t *testing.T, m *Manager, cmd string) *result.Act {
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
