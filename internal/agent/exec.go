package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// ExecOptions describe a command run in a sandbox for a human.
type ExecOptions struct {
	Cmd         []string
	Workdir     string // default /src
	Interactive bool
	TTY         bool
	Streams     box.Streams
}

// Exec runs a command in the sandbox as the sandbox user, streaming its
// output, and returns its exit code.
func (m *Agent) Exec(ctx context.Context, name string, o ExecOptions) (int, error) {
	slug, err := m.Resolve(name)
	if err != nil {
		return 0, err
	}
	wd := o.Workdir
	if wd == "" {
		wd = hostrepo.Workdir
	}
	// The exec's stderr is the user's terminal: ask the engine first, so a
	// missing, paused or unreachable sandbox is one clear line, not docker's
	// message followed by ours.
	n, in, err := m.OwnContainer(ctx, slug)
	if err != nil {
		return 0, err
	}
	if in.State != "running" {
		if in.ExitCode != protocol.IdleExit || in.State == "paused" || m.Wake == nil {
			return 0, NotRunning(slug, in.State)
		}
		if err := m.Wake(ctx, slug); err != nil {
			return 0, fmt.Errorf("sandbox '%s' stopped after being idle, and starting it again failed: %w", slug, err)
		}
	}
	// Every process of the session carries a marker, so whatever ends it (its
	// end, Ctrl-C, SIGTERM, a closed terminal) what it started is killed:
	// the marked processes and every process below one. A session runs
	// beside agent calls (it takes no lock), so it cannot claim new orphans
	// of PID 1 as an agent call does; a process that both clears its
	// environment and leaves its tree outlives a human's session.
	var raw [12]byte
	_, _ = rand.Read(raw[:])
	tok := hex.EncodeToString(raw[:])
	ectx, cut := context.WithCancelCause(ctx)
	defer cut(nil)
	if rec, _ := m.Store().Load(slug); watchesEnd(rec) {
		defer m.watchEnd(ectx, slug, cut)()
	}
	res, err := m.BoxOf(n).Exec(ectx, box.ExecSpec{
		Workdir: wd, Interactive: o.Interactive, TTY: o.TTY, Cmd: o.Cmd,
		Env: map[string]string{"LITTERBOX_SESSION": tok},
	}, o.Streams)
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, _ = m.helperTool(kctx, slug, io.Discard, protocol.CmdKill{Mark: "LITTERBOX_SESSION=" + tok})
	var ended *EndedError
	if errors.As(context.Cause(ectx), &ended) {
		return 0, ended
	}
	if err != nil {
		if ctx.Err() != nil {
			return 130, nil // interrupted: the session is over
		}
		return 0, m.execError(ctx, slug, err)
	}
	return res.ExitCode, nil
}
