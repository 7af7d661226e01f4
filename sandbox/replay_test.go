package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// replayRepo returns a Manager whose commands come from testdata/<name>.json,
// or, with -record, from the real engine and a real repository (re-recording
// the transcript). The repo is always called "replayrepo" so container names
// match between the two modes.
func replayManager(t *testing.T, name string) *Manager {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "replayrepo")
	if *testenv.Record {
		testenv.NewRepo(t, dir, testenv.SmallFiles)
		testenv.RemoveAll(dir, "replayrepo")
		testenv.CleanupRepo(t, dir, "replayrepo")
	} else if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := testenv.Transcript(t, filepath.Join("testdata", name+".json"), runner.Subst{dir: "$REPO"})
	m, err := Open(context.Background(), r, "docker", dir, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	// Fixed so replays do not depend on the machine that recorded them.
	m.Config.CPUs = "2"
	m.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	return m
}

// TestReplayLifecycle walks create, list, pause, resume and delete, with their
// idempotent and refused cases, over a transcript of a real engine.
func TestReplayLifecycle(t *testing.T) {
	ctx := context.Background()
	m := replayManager(t, "lifecycle")

	c, err := m.Create(ctx, CreateOptions{Name: "My Feature Name!@#"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "my-feature-name" || c.Branch != "litterbox/my-feature-name" || c.Container != "litterbox-replayrepo-my-feature-name" {
		t.Errorf("created %+v", c)
	}
	if c.Status != StatusActive || c.Setup.ExitCode != 0 || c.Setup.Stdout != "hello world\n" || len(c.Warnings) != 0 {
		t.Errorf("created %+v", c)
	}

	if _, err := m.Create(ctx, CreateOptions{Name: "my-feature-name"}); !errorAs[*ExistsError](err) {
		t.Errorf("second create: %v, want ExistsError", err)
	}

	list, err := m.List(ctx, false)
	if err != nil || len(list) != 1 || list[0].Status != StatusActive || list[0].Base != c.Base {
		t.Fatalf("list: %+v %v", list, err)
	}

	steps := []struct {
		op      func(context.Context, string) (Outcome, error)
		changed bool
		status  string
	}{
		{m.Pause, true, StatusPaused},
		{m.Pause, false, StatusPaused},
		{m.Resume, true, StatusActive},
		{m.Resume, false, StatusActive},
	}
	for i, s := range steps {
		o, err := s.op(ctx, "my-feature-name")
		if err != nil || o.Changed != s.changed || o.Status != s.status {
			t.Errorf("step %d: %+v %v", i, o, err)
		}
	}

	if _, err := m.Delete(ctx, "my-feature-name", false); !errorAs[*ActiveError](err) {
		t.Errorf("delete of active sandbox: %v, want ActiveError", err)
	}
	d, err := m.Delete(ctx, "my-feature-name", true)
	if err != nil || d.BranchTip != c.Base {
		t.Errorf("forced delete: %+v %v", d, err)
	}
	if _, err := m.Delete(ctx, "my-feature-name", true); !errorAs[*NotFoundError](err) {
		t.Errorf("delete after delete: %v, want NotFoundError", err)
	}
	if _, err := m.Pause(ctx, "my-feature-name"); !errorAs[*NotFoundError](err) {
		t.Errorf("pause of deleted: %v, want NotFoundError", err)
	}
	if list, err := m.List(ctx, false); err != nil || len(list) != 0 {
		t.Errorf("list after delete: %+v %v", list, err)
	}
}

// TestReplayCreateRollsBackOnCopyFailure replays a create whose docker cp
// fails, and checks every resource made before it is removed again.
func TestReplayCreateRollsBackOnCopyFailure(t *testing.T) {
	ctx := context.Background()
	m := replayManager(t, "create-rollback")
	fault := &runner.Fault{Inner: m.Git.Runner, Match: "docker cp", N: 1}
	m.Git.Runner = fault
	m.Provider = providerWith(m, fault)

	_, err := m.Create(ctx, CreateOptions{Name: "doomed"})
	var se *StepError
	if !errors.As(err, &se) || len(se.Left) != 0 {
		t.Fatalf("create: %v, want a StepError with nothing left", err)
	}
	if !fault.Fired() {
		t.Fatal("fault never fired")
	}
	if rec, _ := m.store().load("doomed"); rec != nil {
		t.Errorf("state left behind: %+v", rec)
	}
}

func errorAs[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}
