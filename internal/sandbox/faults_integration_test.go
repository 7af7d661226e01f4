//go:build integration

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/milestone"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// hostState is what no failure may change in the user's repository: HEAD,
// the index and the work tree.
func hostState(t *testing.T, m *Manager) string {
	t.Helper()
	return testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD") + "\n" +
		testenv.Git(t, m.Repo.Root, "ls-files", "-s") + "\n" +
		testenv.Git(t, m.Repo.Root, "status", "--porcelain=v1", "--untracked-files=all")
}

// faultOp is one operation walked through a failure at each of its steps.
type faultOp struct {
	name string
	// prepare makes what the operation needs, with the real runner; it
	// returns the sandbox name.
	prepare func(t *testing.T, m *Manager, step int) string
	// run is the operation; step numbers the attempt, for unique file names.
	run func(ctx context.Context, m *Manager, sb string, step int) error
	// check asserts the operation's own invariants after a failed (err !=
	// nil) or survived attempt, with the real runner back in place.
	check func(t *testing.T, m *Manager, sb string, step int, err error)
}

// TestIntegrationFaultAtEveryStep fails each docker and git command of
// delete, write, bash, apply and milestone in turn (create has its own test)
// and checks the invariants after each: the user's HEAD, index and work tree
// as they were; no snapshot lost (what reached the sandbox is committed by the
// next call); no branch overwritten; a delete either completes or names what
// is left, and a retry finishes it; an error that names the failure.
func TestIntegrationFaultAtEveryStep(t *testing.T) {
	ops := []faultOp{
		{
			name:    "write",
			prepare: sharedSandbox("w"),
			run: func(ctx context.Context, m *Manager, sb string, step int) error {
				_, err := m.Agent.Write(ctx, sb, fmt.Sprintf("w%d.txt", step), []byte("written\n"))
				return err
			},
			check: noSnapshotLost(func(step int) string { return fmt.Sprintf("w%d.txt", step) }),
		},
		{
			name:    "bash",
			prepare: sharedSandbox("b"),
			run: func(ctx context.Context, m *Manager, sb string, step int) error {
				res, err := m.Agent.Bash(ctx, sb, agent.BashOptions{Command: fmt.Sprintf("echo made > b%d.txt", step)})
				if err == nil && res.ExitCode != 0 {
					err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
				}
				return err
			},
			check: noSnapshotLost(func(step int) string { return fmt.Sprintf("b%d.txt", step) }),
		},
		{
			name: "milestone",
			prepare: func(t *testing.T, m *Manager, step int) string {
				sb := sharedSandbox("m")(t, m, step)
				for i := range 2 {
					if _, err := m.Agent.Write(context.Background(), sb, fmt.Sprintf("m%d-%d.txt", step, i), []byte("x\n")); err != nil {
						t.Fatal(err)
					}
				}
				return sb
			},
			run: func(ctx context.Context, m *Manager, sb string, step int) error {
				_, err := milestone.Make(ctx, m.Repo, sb, fmt.Sprintf("milestone %d", step))
				return err
			},
			check: func(t *testing.T, m *Manager, sb string, step int, err error) {
				// Squashed or not, the branch holds both files.
				for i := range 2 {
					f := fmt.Sprintf("m%d-%d.txt", step, i)
					if _, gerr := m.Repo.Git.Output(context.Background(), "cat-file", "-e", "litterbox/"+sb+":"+f); gerr != nil {
						t.Errorf("%s missing from the branch after the milestone (err %v)", f, err)
					}
				}
			},
		},
		{
			name: "apply",
			prepare: func(t *testing.T, m *Manager, step int) string {
				sb := fmt.Sprintf("a%d", step)
				// A sandbox a step, more than an agent may have: a person's.
				if _, err := m.Create(context.Background(), create.CreateOptions{Name: sb, OverLimit: true}); err != nil {
					t.Fatal(err)
				}
				if _, err := m.Agent.Write(context.Background(), sb, fmt.Sprintf("applied%d.txt", step), []byte("from the sandbox\n")); err != nil {
					t.Fatal(err)
				}
				return sb
			},
			run: func(ctx context.Context, m *Manager, sb string, step int) error {
				_, err := m.Apply(ctx, sb, review.Options{Stdout: io.Discard, Stderr: io.Discard})
				return err
			},
			check: func(t *testing.T, m *Manager, sb string, step int, err error) {
				if err == nil {
					return
				}
				// A failed apply leaves no cherry-pick (or am) session behind either.
				for _, p := range []string{"rebase-apply", "CHERRY_PICK_HEAD", "sequencer"} {
					if out, _ := m.Repo.Git.Output(context.Background(), "rev-parse", "--git-path", p); exists(strings.TrimSpace(out), m.Repo.Root) {
						t.Errorf("a git session was left in %s", out)
					}
				}
			},
		},
		{
			name: "delete",
			prepare: func(t *testing.T, m *Manager, step int) string {
				sb := fmt.Sprintf("d%d", step)
				if _, err := m.Create(context.Background(), create.CreateOptions{Name: sb}); err != nil {
					t.Fatal(err)
				}
				return sb
			},
			run: func(ctx context.Context, m *Manager, sb string, step int) error {
				_, err := m.Delete(ctx, sb, true)
				return err
			},
			check: func(t *testing.T, m *Manager, sb string, step int, err error) {
				var pe *PartialDeleteError
				if err != nil && !errors.As(err, &pe) {
					// Failing before anything was removed is fine too; the
					// sandbox must then be whole.
					if len(leftovers(t, m, sb)) == 0 {
						t.Errorf("delete failed (%v) yet nothing of the sandbox is left", err)
					}
				}
				// A second delete, the engine healthy again, finishes the job.
				if _, derr := m.Delete(context.Background(), sb, true); derr != nil && !errorAs[*hostrepo.NotFoundError](derr) {
					t.Errorf("retrying delete: %v", derr)
				}
				if left := leftovers(t, m, sb); len(left) > 0 {
					t.Errorf("after the retry, left: %v", left)
				}
			},
		},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) { walkFaults(t, op) })
	}
}

func walkFaults(t *testing.T, op faultOp) {
	ctx := context.Background()
	m := realManager(t)
	real := testenv.Exec()

	// A first run warms what later runs find ready (the private index, the
	// committer identity), so the probe sees the steps every later run makes.
	if op.name != "delete" {
		if err := op.run(ctx, m, op.prepare(t, m, 1000), 1000); err != nil {
			t.Fatalf("warm-up run: %v", err)
		}
	}
	// The probe: which commands does a successful run make?
	sb := op.prepare(t, m, 0)
	counter := &runner.Counter{Inner: real}
	useRunner(m, counter)
	if err := op.run(ctx, m, sb, 0); err != nil {
		t.Fatalf("probe run: %v", err)
	}
	useRunner(m, real)
	steps := counter.Commands()
	if len(steps) == 0 {
		t.Fatal("the operation ran no command")
	}
	errorsSeen := 0
	for n := 1; n <= len(steps); n++ {
		verb := runner.Verb(runner.Cmd{Name: steps[n-1][0], Args: steps[n-1][1:]})
		t.Run(fmt.Sprintf("%d-%s", n, strings.ReplaceAll(verb, " ", "-")), func(t *testing.T) {
			sb := op.prepare(t, m, n)
			before := hostState(t, m)
			fault := &runner.Fault{Inner: real, N: n, Stderr: "Error response from daemon: injected fault"}
			useRunner(m, fault)
			err := op.run(ctx, m, sb, n)
			useRunner(m, real)
			if !fault.Fired() {
				t.Fatalf("step %d (%s) was not reached: this run made fewer commands than the probe", n, verb)
			}
			if err != nil {
				errorsSeen++
				if msg := err.Error(); !strings.Contains(msg, "injected fault") || strings.Contains(msg, "\n") {
					t.Errorf("error is not one line carrying the cause: %q", msg)
				}
			}
			if op.name != "apply" || err != nil {
				if after := hostState(t, m); after != before {
					t.Errorf("the host repository changed:\n%s\n---\n%s", before, after)
				}
			}
			op.check(t, m, sb, n, err)
		})
	}
	t.Logf("%s: %d steps, %d failed the operation", op.name, len(steps), errorsSeen)
	if errorsSeen == 0 {
		t.Errorf("no injected failure failed %s", op.name)
	}
}

// sharedSandbox prepares one sandbox for all the steps of an operation.
func sharedSandbox(name string) func(t *testing.T, m *Manager, step int) string {
	return func(t *testing.T, m *Manager, step int) string {
		if ok, _ := m.Repo.Known(context.Background(), name); !ok {
			if _, err := m.Create(context.Background(), create.CreateOptions{Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		return name
	}
}

// noSnapshotLost checks that a file the failed call did put in the sandbox
// is committed by the next call, and that the branch only ever moved forward.
func noSnapshotLost(file func(step int) string) func(t *testing.T, m *Manager, sb string, step int, err error) {
	return func(t *testing.T, m *Manager, sb string, step int, err error) {
		ctx := context.Background()
		inBox, _ := m.Agent.Bash(ctx, sb, agent.BashOptions{Command: "test -e " + file(step)})
		if _, serr := m.Agent.Scan(ctx, sb, "scan", "after a fault"); serr != nil {
			t.Fatalf("the next call failed: %v", serr)
		}
		_, gerr := m.Repo.Git.Output(ctx, "cat-file", "-e", "litterbox/"+sb+":"+file(step))
		onBranch := gerr == nil
		if inBox != nil && inBox.ExitCode == 0 && !onBranch {
			t.Errorf("%s reached the sandbox but was never committed (the call said %v)", file(step), err)
		}
		if err == nil && !onBranch {
			t.Errorf("the call succeeded but %s is not on the branch", file(step))
		}
	}
}

func exists(p, root string) bool {
	if !strings.HasPrefix(p, "/") {
		p = root + "/" + p
	}
	_, err := os.Stat(p)
	return err == nil
}
