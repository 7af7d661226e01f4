package create

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// TestRunStepsUndoesInReverse checks the undo stack: the steps done are
// undone last first, the failed step too unless it made nothing, the
// steps after it never run, and what an undo left is named.
func TestRunStepsUndoesInReverse(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		failErr error
		want    []string
		left    []string
	}{
		{"failed step undone", boom, []string{"do a", "do b", "do c", "undo c", "undo b", "undo a"}, []string{"b's leftover"}},
		{"failed step made nothing", madeNothing{boom}, []string{"do a", "do b", "do c", "undo b", "undo a"}, []string{"b's leftover"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			mk := func(name string, err error, left ...string) step {
				return step{name: name,
					do:   func(context.Context) error { got = append(got, "do "+name); return err },
					undo: func(context.Context) []string { got = append(got, "undo "+name); return left },
				}
			}
			look := step{name: "look", do: func(context.Context) error { got = append(got, "look"); return nil }}
			err := runSteps(context.Background(), []step{mk("a", nil), look, mk("b", nil, "b's leftover"), mk("c", tc.failErr), mk("d", nil)})
			want := append([]string{"do a", "look"}, tc.want[1:]...)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ran %q, want %q", got, want)
			}
			var se *hostrepo.StepError
			if !errors.Is(err, boom) || !errors.As(err, &se) || !reflect.DeepEqual(se.Left, tc.left) {
				t.Errorf("error %v (%+v), want boom with left %q", err, se, tc.left)
			}
		})
	}
}

// TestRunStepsCancelledStillUndoes checks that a create cut short (Ctrl-C)
// still takes away what it made.
func TestRunStepsCancelledStillUndoes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	undone := false
	err := runSteps(ctx, []step{
		{name: "made", do: func(context.Context) error { return nil }, undo: func(ctx context.Context) []string {
			undone = ctx.Err() == nil
			return nil
		}},
		{name: "cut", do: func(context.Context) error { cancel(); return context.Canceled }},
	})
	if !errors.Is(err, context.Canceled) || !undone {
		t.Errorf("err %v, undone with a live context %v", err, undone)
	}
}

// TestRunStepsUndoesAfterASlowUndo checks that an undo which uses up its
// time (an engine that does not answer) leaves the undos after it their
// own: the branch is still removed when the container could not be.
func TestRunStepsUndoesAfterASlowUndo(t *testing.T) {
	defer func(b time.Duration) { undoBudget = b }(undoBudget)
	undoBudget = 50 * time.Millisecond
	live := false
	err := runSteps(context.Background(), []step{
		{name: "branch", do: func(context.Context) error { return nil }, undo: func(ctx context.Context) []string {
			live = ctx.Err() == nil
			return nil
		}},
		{name: "box", do: func(context.Context) error { return errors.New("boom") }, undo: func(ctx context.Context) []string {
			<-ctx.Done()
			return []string{"container"}
		}},
	})
	var se *hostrepo.StepError
	if !live || !errors.As(err, &se) || !reflect.DeepEqual(se.Left, []string{"container"}) {
		t.Errorf("branch undone with a live context %v, error %v", live, err)
	}
}
