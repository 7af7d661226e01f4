//go:build linux

package membox

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

// ErrInjected is the failure Faulty injects.
var ErrInjected = errors.New("injected fault")

// Faulty is a provider whose FailAt-th operation (counting from 1, every
// method but Caps, Endpoint and Versions) fails with ErrInjected, as an
// engine's refusal would; 0 fails none. Ops lists the operations made,
// for a probe run to count.
type Faulty struct {
	P      box.Provider
	FailAt int
	// Kind, when set, makes the failure one the providers classify (an
	// engine gone unreachable, say); otherwise it is unclassified.
	Kind func(error) error

	mu    sync.Mutex
	ops   []string
	fired bool
}

// Ops are the operations made so far, by name.
func (f *Faulty) Ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ops...)
}

// Fired reports whether the fault was injected.
func (f *Faulty) Fired() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// op records operation name and says whether it is the one to fail.
func (f *Faulty) op(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, name)
	if len(f.ops) != f.FailAt {
		return nil
	}
	f.fired = true
	if f.Kind != nil {
		return f.Kind(ErrInjected)
	}
	return ErrInjected
}

func (f *Faulty) Caps() box.Caps                                       { return f.P.Caps() }
func (f *Faulty) Endpoint(ctx context.Context) (string, error)         { return f.P.Endpoint(ctx) }
func (f *Faulty) Versions(ctx context.Context) (string, string, error) { return f.P.Versions(ctx) }

func (f *Faulty) Create(ctx context.Context, spec box.Spec) (string, error) {
	if err := f.op("create"); err != nil {
		return "", err
	}
	return f.P.Create(ctx, spec)
}

func (f *Faulty) Exec(ctx context.Context, name string, spec box.ExecSpec, s box.Streams) (runner.Result, error) {
	what := "exec"
	if args, ok := helperArgs(spec.Cmd); ok && len(args) > 0 {
		what += " " + args[0]
	}
	if err := f.op(what); err != nil {
		return runner.Result{}, err
	}
	return f.P.Exec(ctx, name, spec, s)
}

func (f *Faulty) CopyIn(ctx context.Context, name, dir string, tr io.Reader) error {
	if err := f.op("copy in " + dir); err != nil {
		return err
	}
	return f.P.CopyIn(ctx, name, dir, tr)
}

func (f *Faulty) CopyOut(ctx context.Context, name, path string, w io.Writer) error {
	if err := f.op("copy out"); err != nil {
		return err
	}
	return f.P.CopyOut(ctx, name, path, w)
}

func (f *Faulty) Pause(ctx context.Context, name string) error {
	return f.then(f.op("pause"), func() error { return f.P.Pause(ctx, name) })
}

func (f *Faulty) Unpause(ctx context.Context, name string) error {
	return f.then(f.op("unpause"), func() error { return f.P.Unpause(ctx, name) })
}

func (f *Faulty) Start(ctx context.Context, name string) error {
	return f.then(f.op("start"), func() error { return f.P.Start(ctx, name) })
}

func (f *Faulty) Remove(ctx context.Context, name string) error {
	return f.then(f.op("remove"), func() error { return f.P.Remove(ctx, name) })
}

func (f *Faulty) RemoveVolume(ctx context.Context, name string) error {
	return f.then(f.op("remove volume"), func() error { return f.P.RemoveVolume(ctx, name) })
}

func (f *Faulty) CreateVolume(ctx context.Context, name string, labels map[string]string) error {
	return f.then(f.op("create volume"), func() error { return f.P.CreateVolume(ctx, name, labels) })
}

func (f *Faulty) Volumes(ctx context.Context, filters map[string]string) ([]string, error) {
	if err := f.op("volumes"); err != nil {
		return nil, err
	}
	return f.P.Volumes(ctx, filters)
}

func (f *Faulty) VolumeLabels(ctx context.Context, name string) (map[string]string, error) {
	if err := f.op("volume labels"); err != nil {
		return nil, err
	}
	return f.P.VolumeLabels(ctx, name)
}

func (f *Faulty) Inspect(ctx context.Context, name string) (box.Inspection, error) {
	if err := f.op("inspect"); err != nil {
		return box.Inspection{}, err
	}
	return f.P.Inspect(ctx, name)
}

func (f *Faulty) List(ctx context.Context, filters map[string]string, labels []string) ([]box.Summary, error) {
	if err := f.op("list"); err != nil {
		return nil, err
	}
	return f.P.List(ctx, filters, labels)
}

// then is err, or do's when err is nil.
func (f *Faulty) then(err error, do func() error) error {
	if err != nil {
		return err
	}
	return do()
}
