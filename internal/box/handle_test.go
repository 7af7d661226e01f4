package box

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/runner"
)

// named records the box each call of a Provider names.
type named struct {
	Provider // the calls a handle does not make panic
	calls    []string
	env      map[string]string // the last exec's
}

func (n *named) note(op, box string) { n.calls = append(n.calls, op+" "+box) }

func (n *named) Exec(_ context.Context, box string, spec ExecSpec, _ Streams) (runner.Result, error) {
	n.note("exec", box)
	n.env = spec.Env
	return runner.Result{}, nil
}
func (n *named) CopyIn(_ context.Context, box, dir string, _ io.Reader) error {
	n.note("copy-in:"+dir, box)
	return nil
}
func (n *named) CopyOut(_ context.Context, box, path string, _ io.Writer) error {
	n.note("copy-out:"+path, box)
	return nil
}
func (n *named) Inspect(_ context.Context, box string) (Inspection, error) {
	n.note("inspect", box)
	return Inspection{}, nil
}
func (n *named) Start(_ context.Context, box string) error   { n.note("start", box); return nil }
func (n *named) Pause(_ context.Context, box string) error   { n.note("pause", box); return nil }
func (n *named) Unpause(_ context.Context, box string) error { n.note("unpause", box); return nil }
func (n *named) Remove(_ context.Context, box string) error  { n.note("remove", box); return nil }

// Every operation of a handle goes to its own box, with its arguments.
func TestHandleNamesItsBox(t *testing.T) {
	p := &named{}
	b := Of(p, "litterbox-app-1234-work")
	ctx := context.Background()
	_, _ = b.Exec(ctx, ExecSpec{}, Streams{})
	_ = b.CopyIn(ctx, "/src", strings.NewReader(""))
	_ = b.CopyOut(ctx, "/etc/passwd", io.Discard)
	_, _ = b.Inspect(ctx)
	_ = b.Start(ctx)
	_ = b.Pause(ctx)
	_ = b.Unpause(ctx)
	_ = b.Remove(ctx)
	want := []string{"exec", "copy-in:/src", "copy-out:/etc/passwd", "inspect", "start", "pause", "unpause", "remove"}
	for i := range want {
		want[i] += " litterbox-app-1234-work"
	}
	if !reflect.DeepEqual(p.calls, want) {
		t.Errorf("calls %q, want %q", p.calls, want)
	}
}

// A handle's environment reaches every command run in its box, under the
// command's own, and the caller's map is left as it was.
func TestHandleEnvJoinsEachExec(t *testing.T) {
	p := &named{}
	b := Box{P: p, Name: "litterbox-app-1234-work", Env: map[string]string{"LITTERBOX_SANDBOX": "work", "A": "box"}}
	own := map[string]string{"A": "command"}
	_, _ = b.Exec(context.Background(), ExecSpec{Env: own}, Streams{})
	if want := map[string]string{"LITTERBOX_SANDBOX": "work", "A": "command"}; !reflect.DeepEqual(p.env, want) {
		t.Errorf("env %v, want %v", p.env, want)
	}
	if len(own) != 1 || len(b.Env) != 2 {
		t.Errorf("maps changed: command's %v, box's %v", own, b.Env)
	}
	_, _ = Of(p, "x").Exec(context.Background(), ExecSpec{}, Streams{})
	if p.env != nil {
		t.Errorf("a handle without env gave %v", p.env)
	}
}
