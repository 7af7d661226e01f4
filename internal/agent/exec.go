package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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
	// Secrets: the command's environment holds the sandbox's secrets, as
	// an agent's bash call's does.
	Secrets bool
}

// Exec runs a command in the sandbox as the sandbox user, streaming its
// output, and returns its exit code.
func (m *Agent) Exec(ctx context.Context, name string, o ExecOptions) (int, error) {
	slug, n, err := m.running(ctx, name)
	if err != nil {
		return 0, err
	}
	return m.session(ctx, slug, n, o, nil)
}

// running resolves name to a sandbox that runs, starting it again when
// it stopped for being idle, and returns its slug and container.
func (m *Agent) running(ctx context.Context, name string) (slug string, n hostrepo.Names, err error) {
	slug, err = m.Repo.Resolve(name)
	if err != nil {
		return "", n, err
	}
	// The exec's stderr is the user's terminal: ask the engine first, so a
	// missing, paused or unreachable sandbox is one clear line, not docker's
	// message followed by ours.
	n, in, err := m.Repo.OwnContainer(ctx, slug)
	if err != nil {
		return "", n, err
	}
	if in.State != "running" {
		if in.ExitCode == protocol.IdleExit && in.State != "paused" {
			return "", n, &IdleError{Slug: slug, State: in.State}
		}
		return "", n, NotRunning(slug, in.State)
	}
	return slug, n, nil
}

// session runs o's command in sandbox slug (named n) until it ends, alongside (when
// set) running beside it with env, the session's marker, and then kills every
// process the session started. It returns the command's exit code, 130
// when ctx ended it.
func (m *Agent) session(ctx context.Context, slug string, n hostrepo.Names, o ExecOptions, alongside func(ctx context.Context, env map[string]string)) (int, error) {
	wd := o.Workdir
	if wd == "" {
		wd = hostrepo.Workdir
	}
	// Through the helper: on a terminal the command starts once it has
	// the person's size, and a command not in the image is told plainly.
	h, _, err := m.helperFor(ctx, slug)
	if err != nil {
		return 0, err
	}
	spec := box.ExecSpec{Workdir: wd, Interactive: o.Interactive, TTY: o.TTY, Cmd: h.Argv(protocol.CmdSized{Cmd: o.Cmd})}
	if o.Secrets {
		sec, err := m.Repo.SecretsFor(ctx, slug)
		if err != nil {
			return 0, err
		}
		spec.Secrets = sec.Env()
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
	spec.Env = map[string]string{protocol.SessionVar: tok}
	ectx, cut := context.WithCancelCause(ctx)
	defer cut(nil)
	if rec, _ := m.Repo.Store().Load(slug); watchesEnd(rec) {
		defer m.watchEnd(ectx, slug, cut)()
	}
	beside := make(chan struct{})
	actx, stopBeside := context.WithCancel(ectx)
	if alongside != nil {
		go func() { defer close(beside); alongside(actx, map[string]string{protocol.SessionVar: tok}) }()
	} else {
		close(beside)
	}
	res, err := m.Repo.BoxOf(n).Exec(ectx, spec, o.Streams)
	stopBeside()
	<-beside
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, _ = m.helperTool(kctx, slug, io.Discard, protocol.CmdKill{Mark: protocol.SessionVar + "=" + tok})
	var ended *EndedError
	if errors.As(context.Cause(ectx), &ended) {
		return 0, ended
	}
	if err != nil {
		if ctx.Err() != nil {
			return 130, nil // interrupted: the session is over
		}
		return 0, ExecError(ctx, m.Repo, slug, err)
	}
	return res.ExitCode, nil
}
