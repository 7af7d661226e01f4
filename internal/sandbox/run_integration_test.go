//go:build integration

package sandbox

import (
	"context"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// standinImage builds base with the stand-in agent (e2e/standin) in
// /usr/local/bin, as a project's image has its agent, and removes it at
// the end.
func standinImage(t *testing.T, base string) string {
	t.Helper()
	dir := t.TempDir()
	build := osexec.Command("go", "build", "-o", filepath.Join(dir, "standin"), "github.com/litterbox-dev/litterbox/e2e/standin")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the stand-in agent: %v\n%s", err, out)
	}
	writeFile(t, filepath.Join(dir, "Dockerfile"), "FROM "+base+"\nCOPY standin /usr/local/bin/standin\nENV PATH=/usr/local/bin:/usr/bin:/bin\n")
	tag := "litterbox-test/" + testenv.UniqueName("standin") + ":latest"
	if out, err := osexec.Command("docker", "build", "-q", "-t", tag, dir).CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", tag, err, out)
	}
	t.Cleanup(func() { _ = osexec.Command("docker", "rmi", "-f", tag).Run() })
	return tag
}

// `litterbox run`: the agent's changes become commits while it works and
// at its end, its processes end with it, its exit status is the
// session's; Ctrl-C ends it and commits what it left; one session per
// sandbox, and list shows it.
func TestIntegrationRun(t *testing.T) {
	for _, base := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(strings.NewReplacer("/", "-", ":", "-").Replace(base), func(t *testing.T) {
			t.Parallel()
			img := standinImage(t, base)
			m := repoManager(t, testenv.Files{"README.md": "hi\n", ".litterbox.toml": "[docker]\nimage = \"" + img + "\"\n"}, "")
			ctx := context.Background()
			if _, err := m.Create(ctx, create.CreateOptions{Name: "w"}); err != nil {
				t.Fatal(err)
			}
			t.Run("a session", func(t *testing.T) { runSession(t, m) })
			t.Run("interrupted", func(t *testing.T) { runInterrupted(t, m) })
		})
	}
}

func runSession(t *testing.T, m *Manager) {
	ctx := context.Background()
	var out strings.Builder
	var during []string
	listed := make(chan *RunSession, 1)
	res, err := m.Agent.Run(ctx, "w", agent.RunOptions{
		ExecOptions: agent.ExecOptions{Cmd: []string{"standin", "-exit", "3"}, Interactive: true,
			Streams: box.Streams{Stdin: strings.NewReader("write the steps\n"), Stdout: &out, Stderr: &out}},
		Committed: func(r *result.Act) {
			during = append(during, r.Snapshot)
			if len(during) == 1 {
				// While it runs: list shows it, and a second session is refused.
				infos, _ := m.List(ctx, false)
				listed <- infos[0].Agent
				if _, err := m.Agent.Run(ctx, "w", agent.RunOptions{ExecOptions: agent.ExecOptions{Cmd: []string{"true"}}}); err == nil || !strings.Contains(err.Error(), "already runs an agent (run: standin -exit 3") {
					t.Errorf("a second session while one runs: %v", err)
				}
			}
		},
	})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("run: %+v %v\n%s", res, err, out.String())
	}
	if !strings.Contains(out.String(), "standin: working on: write the steps") || !strings.Contains(out.String(), "standin: done") {
		t.Errorf("the agent's output: %s", out.String())
	}
	// Four steps 2.5 s apart, each committed once still for 1.5 s.
	if len(res.Commits) < 3 || len(during) != len(res.Commits) {
		t.Errorf("commits during the run %v, in all %v: want one per step or so", during, res.Commits)
	}
	if a := <-listed; a == nil || a.Command != "standin -exit 3" || a.PID != os.Getpid() {
		t.Errorf("list during the run: agent %+v", a)
	}
	if infos, _ := m.List(ctx, false); infos[0].Agent != nil {
		t.Errorf("list after the run: agent %+v", infos[0].Agent)
	}
	tip := res.Commits[len(res.Commits)-1]
	// The subject says what changed; the body holds the command.
	if got := testenv.Git(t, m.Repo.Root, "log", "--format=%s", "-1", tip); !strings.HasPrefix(got, "run: standin/step-") || !strings.HasSuffix(got, ")") {
		t.Errorf("commit subject %q", got)
	}
	if got := testenv.Git(t, m.Repo.Root, "log", "--format=%b", "-1", tip); strings.TrimSpace(got) != "standin -exit 3" {
		t.Errorf("commit body %q", got)
	}
	if got := testenv.Git(t, m.Repo.Root, "ls-tree", "-r", "--name-only", tip, "standin"); got != "standin/step-1.txt\nstandin/step-2.txt\nstandin/step-3.txt\nstandin/step-4.txt" {
		t.Errorf("the branch holds %q", got)
	}
	// The branch is what /src holds, and the agent's background process
	// ended with the session.
	if got := testenv.Git(t, m.Repo.Root, "show", tip+":standin/step-4.txt"); got != "step 4 of 4: write the steps" {
		t.Errorf("step 4 on the branch: %q", got)
	}
	if n := exec(t, m, "w", "grep -l '[s]leep.600' /proc/[0-9]*/cmdline 2>/dev/null | grep -v self | wc -l"); strings.TrimSpace(n) != "0" {
		t.Errorf("%s background process(es) of the agent outlived the session", strings.TrimSpace(n))
	}
}

func runInterrupted(t *testing.T, m *Manager) {
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	time.AfterFunc(4*time.Second, cancel)
	res, err := m.Agent.Run(ctx, "w", agent.RunOptions{
		ExecOptions: agent.ExecOptions{Cmd: []string{"standin", "-steps", "20", "-pause", "500ms"}, Interactive: true,
			Streams: box.Streams{Stdin: strings.NewReader("keep going\n"), Stdout: &out, Stderr: &out}},
	})
	if err != nil || res.ExitCode != 130 || len(res.Commits) == 0 {
		t.Fatalf("interrupted run: %+v %v\n%s", res, err, out.String())
	}
	// What it wrote before the interrupt is all on the branch: the tree at
	// the tip is the sandbox's.
	tip := res.Commits[len(res.Commits)-1]
	onBranch := testenv.Git(t, m.Repo.Root, "ls-tree", "-r", "--name-only", tip, "standin")
	inSandbox := exec(t, m, "w", "cd /src && ls standin/* | sort")
	if onBranch != strings.TrimSpace(inSandbox) || !strings.Contains(onBranch, "step-5.txt") || strings.Contains(onBranch, "step-20.txt") {
		t.Errorf("after the interrupt the branch holds %q, the sandbox %q", onBranch, inSandbox)
	}
	if n := exec(t, m, "w", "grep -l '[s]tandin' /proc/[0-9]*/cmdline 2>/dev/null | grep -v self | wc -l"); strings.TrimSpace(n) != "0" {
		t.Errorf("%s process(es) of the interrupted agent still run", strings.TrimSpace(n))
	}
}
