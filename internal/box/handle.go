package box

import (
	"context"
	"io"
	"maps"

	"github.com/litterbox-dev/litterbox/runner"
)

// Box is one box of a provider, held by the core instead of its name: what
// runs in it, what is copied in or out, and its pause, start and removal go
// through the handle (as kind's nodes.Node carries its command runner).
type Box struct {
	P    Provider
	Name string
	// Env is added to every command run in the box (a command's own
	// wins): what the box's own environment could not hold when it was
	// made, such as the sandbox name of a box made ahead in a pool.
	Env map[string]string
}

// Of is the handle of the box called name.
func Of(p Provider, name string) Box { return Box{P: p, Name: name} }

// Exec runs spec in the box.
func (b Box) Exec(ctx context.Context, spec ExecSpec, s Streams) (runner.Result, error) {
	if len(b.Env) > 0 {
		env := maps.Clone(b.Env)
		maps.Copy(env, spec.Env)
		spec.Env = env
	}
	return b.P.Exec(ctx, b.Name, spec, s)
}

// CopyIn extracts the tar stream into dir of the box.
func (b Box) CopyIn(ctx context.Context, dir string, tar io.Reader) error {
	return b.P.CopyIn(ctx, b.Name, dir, tar)
}

// CopyOut writes path of the box to w as a tar stream.
func (b Box) CopyOut(ctx context.Context, path string, w io.Writer) error {
	return b.P.CopyOut(ctx, b.Name, path, w)
}

// Inspect reads the box's state and labels.
func (b Box) Inspect(ctx context.Context) (Inspection, error) { return b.P.Inspect(ctx, b.Name) }

// Start starts the box.
func (b Box) Start(ctx context.Context) error { return b.P.Start(ctx, b.Name) }

// Pause pauses the box.
func (b Box) Pause(ctx context.Context) error { return b.P.Pause(ctx, b.Name) }

// Unpause resumes a paused box.
func (b Box) Unpause(ctx context.Context) error { return b.P.Unpause(ctx, b.Name) }

// Remove removes the box.
func (b Box) Remove(ctx context.Context) error { return b.P.Remove(ctx, b.Name) }
