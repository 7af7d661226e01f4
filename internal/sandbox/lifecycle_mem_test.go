//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/box/membox"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/sandbox/sandboxtest"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// The lifecycle over the in-memory provider: what each verb leaves in
// git, in the provider and in the list. The engines' part is in the
// integration tests.

func TestMemCreateListPauseResumeDelete(t *testing.T) {
	m, p := sandboxtest.Mem(t, nil)
	ctx := context.Background()
	c, err := m.Create(ctx, create.CreateOptions{Name: "One Two"})
	if err != nil {
		t.Fatal(err)
	}
	head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")
	if c.Name != "one-two" || c.Branch != "litterbox/one-two" || testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/one-two") != head {
		t.Fatalf("created %+v", c)
	}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "one-two"}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a second create of one name: %v", err)
	}
	list, err := m.List(ctx, false)
	if err != nil || len(list) != 1 || list[0].Name != "one-two" || list[0].Status != create.StatusActive || list[0].CommitsAhead == nil || *list[0].CommitsAhead != 0 {
		t.Fatalf("list: %+v %v", list, err)
	}
	if o, err := m.Pause(ctx, "one-two"); err != nil || !o.Changed {
		t.Fatalf("pause: %+v %v", o, err)
	}
	if o, err := m.Pause(ctx, "one-two"); err != nil || o.Changed {
		t.Errorf("a second pause: %+v %v", o, err)
	}
	if _, err := m.Agent.Bash(ctx, "one-two", agent.BashOptions{Command: "true"}); !errorAs[*agent.NotRunningError](err) {
		t.Errorf("a call in a paused sandbox: %v", err)
	}
	if list, _ := m.List(ctx, false); list[0].Status != create.StatusPaused {
		t.Errorf("listed as %s while paused", list[0].Status)
	}
	if o, err := m.Resume(ctx, "one-two"); err != nil || !o.Changed {
		t.Fatalf("resume: %+v %v", o, err)
	}
	if _, err := m.Agent.Bash(ctx, "one-two", agent.BashOptions{Command: "echo x > x.txt"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Delete(ctx, "one-two", false); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("deleting an active sandbox without force: %v", err)
	}
	d, err := m.Delete(ctx, "one-two", true)
	if err != nil || d.BranchTip == "" || d.BranchTip == head {
		t.Fatalf("delete: %+v %v", d, err)
	}
	if out := testenv.Git(t, m.Repo.Root, "branch", "--list", "litterbox/*"); out != "" {
		t.Errorf("branches left: %s", out)
	}
	if boxes, _ := p.List(ctx, nil, nil); len(boxes) != 0 {
		t.Errorf("boxes left: %+v", boxes)
	}
	if _, err := m.Delete(ctx, "one-two", false); !errorAs[*hostrepo.NotFoundError](err) {
		t.Errorf("a second delete: %v", err)
	}
}

// PauseAll and ResumeAll take every sandbox of the repository.
func TestMemPauseAllResumeAll(t *testing.T) {
	m, _ := sandboxtest.Mem(t, nil)
	ctx := context.Background()
	for _, n := range []string{"a", "b"} {
		if _, err := m.Create(ctx, create.CreateOptions{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	outs, err := m.PauseAll(ctx, sandbox.ThisRepo)
	if err != nil || len(outs) != 2 {
		t.Fatalf("pause all: %+v %v", outs, err)
	}
	outs, err = m.ResumeAll(ctx, sandbox.ThisRepo)
	if err != nil || len(outs) != 2 {
		t.Fatalf("resume all: %+v %v", outs, err)
	}
	list, _ := m.List(ctx, false)
	for _, s := range list {
		if s.Status != create.StatusActive {
			t.Errorf("%s is %s after resume all", s.Name, s.Status)
		}
	}
}

// A sandbox's work reviewed with diff and log, then merged: the host gets
// exactly the reviewed commits, and the sandbox is gone.
func TestMemDiffLogMerge(t *testing.T) {
	m, _ := sandboxtest.Sandbox(t, "w", nil)
	ctx := context.Background()
	for _, cmd := range []string{"echo one > one.txt", "echo two > two.txt && rm README.md"} {
		if _, err := m.Agent.Bash(ctx, "w", agent.BashOptions{Command: cmd}); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if err := m.Diff(ctx, "w", []string{"--stat"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "3 files changed") {
		t.Fatalf("diff: %q %q %v", out.String(), errOut.String(), err)
	}
	out.Reset()
	if err := m.Log(ctx, "w", false, nil, &out, &errOut); err != nil || strings.Count(out.String(), "commit ") != 2 {
		t.Fatalf("log: %q %v", out.String(), err)
	}
	tip := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/w")
	want := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/w^{tree}")
	applied, deleted, err := m.Merge(ctx, "w", review.Options{Tip: tip, Stdout: &out, Stderr: &errOut})
	if err != nil || applied == nil || deleted == nil {
		t.Fatalf("merge: %+v %+v %v\n%s", applied, deleted, err, errOut.String())
	}
	if got := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD^{tree}"); got != want {
		t.Errorf("HEAD's tree %s, want the reviewed %s", got, want)
	}
	if st := testenv.Git(t, m.Repo.Root, "status", "--porcelain"); st != "" {
		t.Errorf("work tree after merge:\n%s", st)
	}
	if _, err := m.Agent.Bash(ctx, "w", agent.BashOptions{Command: "true"}); err == nil {
		t.Error("the merged sandbox still takes calls")
	}
}

// A merge of a branch that moved since the review is refused.
func TestMemMergeRefusesAnUnreviewedTip(t *testing.T) {
	m, _ := sandboxtest.Sandbox(t, "w", nil)
	ctx := context.Background()
	reviewed := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/w")
	if _, err := m.Agent.Bash(ctx, "w", agent.BashOptions{Command: "echo late > late.txt"}); err != nil {
		t.Fatal(err)
	}
	head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")
	if _, _, err := m.Merge(ctx, "w", review.Options{Tip: reviewed}); err == nil {
		t.Fatal("merged a tip nobody reviewed")
	}
	if got := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD"); got != head {
		t.Error("HEAD moved")
	}
}

// A sandbox may start from another branch; base_ref names what exists.
func TestMemCreateFromABaseRef(t *testing.T) {
	m, _ := sandboxtest.Mem(t, nil)
	ctx := context.Background()
	testenv.Git(t, m.Repo.Root, "checkout", "-q", "-b", "topic")
	testenv.Git(t, m.Repo.Root, "commit", "-q", "--allow-empty", "-m", "topic work")
	topic := testenv.Git(t, m.Repo.Root, "rev-parse", "topic")
	testenv.Git(t, m.Repo.Root, "checkout", "-q", "-")
	c, err := m.Create(ctx, create.CreateOptions{Name: "t", BaseRef: "topic"})
	if err != nil || testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/t") != topic {
		t.Fatalf("create from topic: %+v %v", c, err)
	}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "u", BaseRef: "no-such-branch"}); err == nil || !strings.Contains(err.Error(), "no-such-branch") {
		t.Errorf("an unknown base_ref: %v", err)
	}
	if out := testenv.Git(t, m.Repo.Root, "branch", "--list", "litterbox/u"); out != "" {
		t.Errorf("a refused create left its branch: %s", out)
	}
}

func errorAs[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// A create whose provider fails at any one operation fails, carrying the
// cause, and leaves no box, volume, branch, ref or record: the engine-free
// half of TestIntegrationCreateFailureAtEveryStepLeavesNothing.
func TestMemCreateFailureAtEveryStepLeavesNothing(t *testing.T) {
	t.Run("refused", func(t *testing.T) { failEveryStep(t, nil) })
	// An engine gone unreachable after it made the container: the
	// rollback removes what it made (it once took the container as never
	// made, and left it).
	t.Run("unreachable", func(t *testing.T) {
		failEveryStep(t, func(err error) error { return &box.Error{Kind: box.ErrEngineUnreachable, Err: err} })
	})
}

func failEveryStep(t *testing.T, kind func(error) error) {
	probe, p := sandboxtest.Mem(t, nil)
	counted := &membox.Faulty{P: p}
	probe.Repo.Provider = counted
	if _, err := probe.Create(context.Background(), create.CreateOptions{Name: "probe"}); err != nil {
		t.Fatal(err)
	}
	ops := counted.Ops()
	if len(ops) < 5 {
		t.Fatalf("a create made only %v", ops)
	}
	for n := 1; n <= len(ops); n++ {
		t.Run(fmt.Sprintf("%d-%s", n, strings.ReplaceAll(ops[n-1], " ", "-")), func(t *testing.T) {
			m, p := sandboxtest.Mem(t, nil)
			fault := &membox.Faulty{P: p, FailAt: n, Kind: kind}
			m.Repo.Provider = fault
			_, err := m.Create(context.Background(), create.CreateOptions{Name: "victim"})
			if !fault.Fired() {
				t.Fatalf("fault %d (%s) never fired", n, ops[n-1])
			}
			if err == nil {
				t.Fatalf("create succeeded although %s failed", ops[n-1])
			}
			if !errors.Is(err, membox.ErrInjected) && !strings.Contains(err.Error(), membox.ErrInjected.Error()) {
				t.Errorf("error %q does not carry the cause", err)
			}
			if boxes, _ := p.List(context.Background(), nil, nil); len(boxes) != 0 {
				t.Errorf("boxes left: %+v", boxes)
			}
			if vols, _ := p.Volumes(context.Background(), nil); len(vols) != 0 {
				t.Errorf("volumes left: %v", vols)
			}
			if out := testenv.Git(t, m.Repo.Root, "for-each-ref", "refs/heads/litterbox/", "refs/litterbox/"); out != "" {
				t.Errorf("refs left: %s", out)
			}
			if _, err := os.Stat(m.Repo.Layout().Record("victim")); err == nil {
				t.Error("record left")
			}
		})
	}
}

// A sandbox its PID 1 stopped for being idle: the agent's call says so and
// does nothing (agent.IdleError), and the handle starts the sandbox again
// and sends the call again, with the files it had.
func TestMemHandleWakesAnIdleSandbox(t *testing.T) {
	m, p := sandboxtest.Mem(t, nil)
	ctx := context.Background()
	if _, err := m.Create(ctx, create.CreateOptions{Name: "nap"}); err != nil {
		t.Fatal(err)
	}
	sb, err := m.Open("nap")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Write(ctx, "kept.txt", []byte("kept\n")); err != nil {
		t.Fatal(err)
	}
	container := m.Repo.Names("nap").Container
	tip := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/nap")
	if err := p.Stop(container, protocol.IdleExit); err != nil {
		t.Fatal(err)
	}
	_, err = m.Agent.Bash(ctx, "nap", agent.BashOptions{Command: "echo lost > lost.txt"})
	if !errorAs[*agent.IdleError](err) || !errorAs[*agent.NotRunningError](err) {
		t.Fatalf("the agent's call in an idle-stopped sandbox: %v, want an IdleError", err)
	}
	if got := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/nap"); got != tip {
		t.Fatalf("the refused call moved the branch to %s", got)
	}
	if list, _ := m.List(ctx, false); list[0].Status != create.StatusIdle {
		t.Fatalf("listed as %s, want %s", list[0].Status, create.StatusIdle)
	}
	res, err := sb.Bash(ctx, agent.BashOptions{Command: "cat kept.txt; echo again > again.txt"})
	if err != nil || res.Stdout != "kept\n" || res.Snapshot == "" {
		t.Fatalf("the handle's call after the idle stop: %+v %v", res, err)
	}
	if list, _ := m.List(ctx, false); list[0].Status != create.StatusActive {
		t.Fatalf("after the call: %s", list[0].Status)
	}
	// The read tools wake it the same way, each one after its own stop.
	reads := map[string]func() error{
		"read": func() error {
			r, err := sb.Read(ctx, "kept.txt", 0, 0)
			if err == nil && r.Content != "kept\n" {
				err = fmt.Errorf("content %q", r.Content)
			}
			return err
		},
		"ls":   func() error { _, _, err := sb.Ls(ctx, ".", false); return err },
		"glob": func() error { _, _, err := sb.Glob(ctx, "*.txt", "."); return err },
		"grep": func() error { _, _, err := sb.Grep(ctx, "kept", ".", ""); return err },
		"download": func() error {
			_, err := sb.Download(ctx, "kept.txt", filepath.Join(t.TempDir(), "kept.txt"))
			return err
		},
	}
	for name, read := range reads {
		if err := p.Stop(container, protocol.IdleExit); err != nil {
			t.Fatal(err)
		}
		if err := read(); err != nil {
			t.Errorf("%s after the idle stop: %v", name, err)
		}
	}
	// A paused sandbox is a person's choice: the handle does not undo it.
	if _, err := m.Pause(ctx, "nap"); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Bash(ctx, agent.BashOptions{Command: "true"}); !errorAs[*agent.NotRunningError](err) || errorAs[*agent.IdleError](err) {
		t.Fatalf("a call through the handle in a paused sandbox: %v", err)
	}
	if _, err := m.Open("!!!"); err == nil {
		t.Error("a handle opened for an invalid name")
	}
}
