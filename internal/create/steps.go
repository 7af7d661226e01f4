package create

import (
	"context"
	"errors"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
)

// step is one step of a create. do makes its part of the sandbox; undo,
// when set, takes that part away again and names what it could not
// remove. A step that only looks (at git, the engine, the config) has no
// undo.
type step struct {
	name string
	do   func(context.Context) error
	undo func(context.Context) (left []string)
}

// madeNothing marks the failure of a step that made nothing of its part,
// so that its own undo does not run: a name another create or container
// holds is not this create's to remove.
type madeNothing struct{ error }

func (e madeNothing) Unwrap() error { return e.error }

// runSteps runs steps in order until one fails. Then the undos of the
// steps done run in the reverse order, the failed step's first unless it
// made nothing, so that a failed create leaves nothing behind, or names
// what it could not remove.
func runSteps(ctx context.Context, steps []step) error {
	var made []step
	for _, s := range steps {
		err := s.do(ctx)
		if s.undo != nil && (err == nil || !errors.As(err, new(madeNothing))) {
			made = append(made, s)
		}
		if err != nil {
			return unwind(ctx, made, err)
		}
	}
	return nil
}

// undoBudget bounds each undo, so that an engine that never answers
// cannot hold a failed create for ever.
var undoBudget = 60 * time.Second

// unwind runs the undos of made, the last first, even when ctx was
// cancelled (Ctrl-C), and adds what they could not remove to cause. Each
// undo has a budget of its own: an engine slow to remove a container
// (another container's removal holding it, here, under load) must not
// leave the undos after it, the branch's among them, no time at all.
func unwind(ctx context.Context, made []step, cause error) error {
	ctx = context.WithoutCancel(ctx)
	var left []string
	for i := len(made) - 1; i >= 0; i-- {
		left = append(left, undo(ctx, made[i])...)
	}
	if len(left) == 0 {
		return cause
	}
	var se *hostrepo.StepError
	if errors.As(cause, &se) {
		se.Left = append(se.Left, left...)
		return cause
	}
	return &hostrepo.StepError{Step: "create", Err: cause, Left: left}
}

// undo runs s's undo within its budget, and logs how long it took.
func undo(ctx context.Context, s step) []string {
	ctx, cancel := context.WithTimeout(ctx, undoBudget)
	defer cancel()
	start := time.Now()
	left := s.undo(ctx)
	logrus.Debugf("create: undid %s in %v, left %q", s.name, time.Since(start).Round(time.Millisecond), left)
	return left
}

// step tells the create's Progress, when set, that the step name, begun
// at start, is done.
func (c *creation) step(name string, start time.Time) {
	if c.opts.Progress != nil {
		c.opts.Progress(name, time.Since(start))
	}
}

// images is the repository's image builder, its builds told to the
// create's Progress.
func (c *creation) images() *image.Builder {
	b := c.m.Images()
	b.Progress = c.opts.Progress
	return b
}
