package sandbox

import (
	"context"
	"errors"

	"github.com/litterbox-dev/litterbox/dockercli"
)

// ExecOptions describe a command run in a sandbox for a human.
type ExecOptions struct {
	Cmd         []string
	Workdir     string // default /src
	Interactive bool
	TTY         bool
	Streams     dockercli.Streams
}

// Exec runs a command in the sandbox as the sandbox user, streaming its
// output, and returns its exit code.
func (m *Manager) Exec(ctx context.Context, name string, o ExecOptions) (int, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return 0, err
	}
	wd := o.Workdir
	if wd == "" {
		wd = Workdir
	}
	// The exec's stderr is the user's terminal: ask the engine first, so a
	// missing, paused or unreachable sandbox is one clear line, not docker's
	// message followed by ours.
	container := m.Names(slug).Container
	in, err := m.Provider.Inspect(ctx, container)
	switch {
	case errors.Is(err, dockercli.ErrNoSuchContainer):
		return 0, m.missingOrNotFound(ctx, slug)
	case err != nil:
		return 0, err
	case in.State != "running":
		return 0, notRunning(slug, in.State)
	}
	res, err := m.Provider.Exec(ctx, container, dockercli.ExecSpec{
		Workdir: wd, Interactive: o.Interactive, TTY: o.TTY, Cmd: o.Cmd,
	}, o.Streams)
	if err != nil {
		return 0, m.execError(ctx, slug, err)
	}
	return res.ExitCode, nil
}
