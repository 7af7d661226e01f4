package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// A channel is a stream kept open to a sandbox's helper (its serve) that
// calls go over one after another, instead of an exec each: a process that
// serves many calls (litterbox mcp, litterbox run) saves the engine's exec
// on every call. Each call on it is still an act of its own in the
// sandbox, so everything an act guarantees holds; a channel that broke is
// opened again by the next call.
type channel struct {
	key  string
	inW  *io.PipeWriter
	outR *io.PipeReader
	w    *protocol.Writer
	r    *protocol.Reader

	// ended is closed when the exec is over; execErr is its outcome then.
	ended   chan struct{}
	execErr error
	cancel  context.CancelFunc
	// idle ends the channel once no call has used it for channelIdle.
	idle *time.Timer
}

// channelIdle is how long an unused channel stays open: each holds an
// engine client process on the host.
const channelIdle = 5 * time.Minute

// pingWait bounds the answer to a ping of a channel kept from an earlier
// call. A sandbox paused or stopped under it does not answer (under
// gVisor its exec does not even end); the call then opens a new one,
// which the engine refuses with the reason.
const pingWait = time.Second

// channels holds an Agent's channels, by sandbox.
type channels struct {
	mu sync.Mutex
	by map[string]*channel
}

// KeepChannels makes the Agent's calls go over a channel kept open per
// sandbox; Close ends them.
func (m *Agent) KeepChannels() {
	m.chans = &channels{by: map[string]*channel{}}
}

// Close ends the Agent's channels and waits for their execs to end.
func (m *Agent) Close() {
	if m.chans == nil {
		return
	}
	m.chans.mu.Lock()
	open := slices.Collect(maps.Values(m.chans.by))
	clear(m.chans.by)
	m.chans.mu.Unlock()
	for _, ch := range open {
		ch.idle.Stop()
		ch.close()
	}
}

// closeWait bounds how long a channel's helper has to end once told.
const closeWait = 2 * time.Second

// close ends the stream as a client that is done: its helper reads the
// end and exits; one that does not within closeWait is cut off.
func (ch *channel) close() {
	ch.inW.Close()
	select {
	case <-ch.ended:
	case <-time.After(closeWait):
		ch.kill(errors.New("closed"))
		<-ch.ended
	}
}

// channelFor is a live channel to c's sandbox: the one kept, when it
// answers a ping, else a new one.
func (m *Agent) channelFor(c *call) *channel {
	key := c.slug + "\x00" + c.h.ContainerPath()
	m.chans.mu.Lock()
	ch := m.chans.by[c.slug]
	delete(m.chans.by, c.slug)
	m.chans.mu.Unlock()
	if ch != nil {
		ch.idle.Stop()
		if ch.key == key && ch.ping() {
			return ch
		}
		ch.kill(errors.New("replaced"))
	}
	return m.openChannel(c.slug, c, key)
}

// keep puts a channel back once a call is over with it in step.
func (m *Agent) keep(slug string, ch *channel) {
	m.chans.mu.Lock()
	defer m.chans.mu.Unlock()
	if old := m.chans.by[slug]; old != nil && old != ch {
		old.kill(errors.New("replaced"))
	}
	m.chans.by[slug] = ch
	ch.idle = time.AfterFunc(channelIdle, func() { m.drop(slug, ch) })
}

// drop ends a kept channel that went unused.
func (m *Agent) drop(slug string, ch *channel) {
	m.chans.mu.Lock()
	kept := m.chans.by[slug] == ch
	if kept {
		delete(m.chans.by, slug)
	}
	m.chans.mu.Unlock()
	if kept { // else a call took it meanwhile
		ch.close()
	}
}

// openChannel starts the helper's serve in the sandbox. Its exec lives
// past the call that opened it, so it runs under no call's context (nor
// is it in that call's audit trail: each call is, as the exec it saved).
func (m *Agent) openChannel(slug string, c *call, key string) *channel {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	execCtx, cancel := context.WithCancel(context.Background())
	ch := &channel{key: key, inW: inW, outR: outR, w: protocol.NewWriter(inW), r: protocol.NewReader(outR), ended: make(chan struct{}), cancel: cancel}
	go func() {
		var engineErr strings.Builder
		spec := box.ExecSpec{Interactive: true, OwnGroup: true, Cmd: c.h.Argv(protocol.CmdServe{}), StdinKey: protocol.Describe}
		res, err := m.Repo.Box(slug).Exec(execCtx, spec, box.Streams{Stdin: inR, Stdout: outW, Stderr: &engineErr})
		if err == nil && res.ExitCode != 0 {
			err = &helperExitError{code: res.ExitCode, stderr: agenttext.FirstLine(engineErr.String())}
		}
		inR.CloseWithError(errOrClosed(err))
		outW.CloseWithError(errOrEOF(err))
		ch.execErr = err
		close(ch.ended)
	}()
	return ch
}

// ping reports whether the channel's helper answers within pingWait.
func (ch *channel) ping() bool {
	select {
	case <-ch.ended:
		return false
	default:
	}
	ch.r.EndAt(0) // the last call's TDone is behind
	answered := make(chan bool, 1)
	go func() {
		if ch.w.Frame(protocol.TPing, nil) != nil {
			answered <- false
			return
		}
		t, _, err := ch.r.Next()
		answered <- err == nil && t == protocol.TPong
	}()
	t := time.NewTimer(pingWait)
	defer t.Stop()
	select {
	case ok := <-answered:
		return ok
	case <-t.C:
		ch.kill(fmt.Errorf("the sandbox's helper did not answer within %v", pingWait))
		<-answered
		return false
	}
}

// kill ends the channel's exec; reads and writes on it fail with err.
func (ch *channel) kill(err error) {
	ch.inW.CloseWithError(err)
	ch.outR.CloseWithError(err)
	ch.cancel()
}

// callEnv is the environment a call's act gets over a channel, which its
// exec, spec, would have set: the action's, and a command's secrets.
func callEnv(spec box.ExecSpec) []string {
	env := maps.Clone(spec.Env)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, spec.Secrets)
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// startOnChannel opens c's act on the sandbox's channel: a TCall with the
// environment, after which the conversation goes as over an exec, up to
// the helper's TDone.
func (m *Agent) startOnChannel(cancelExec context.CancelFunc, c *call) *actExec {
	ch := m.channelFor(c)
	ch.r.EndAt(protocol.TDone)
	v := &actExec{m: m, slug: c.slug, w: ch.w, r: ch.r, ch: ch, cancelExec: cancelExec, start: time.Now(), exit: -1}
	spec := actSpec(c)
	v.carried = carriedSpec(spec)
	// A channel that broke fails the request's write next, with its cause.
	_ = ch.w.Frame(protocol.TCall, (&protocol.Call{Env: callEnv(spec)}).Encode())
	return v
}

// stopChannel ends a call that failed half way: the channel is closed (it
// may be out of step) and its exec's outcome, or the act's own end when
// its TDone came, says what went wrong, as stop does for an exec.
func (v *actExec) stopChannel(ctx context.Context, err error) error {
	defer v.carry(ctx)
	actErr, ended := v.actEnd()
	v.ch.inW.CloseWithError(err)
	v.ch.outR.CloseWithError(err)
	<-v.ch.ended
	if !ended {
		actErr = v.ch.execErr
	}
	if why := v.failure(ctx, actErr); why != nil {
		return why
	}
	return err
}

// endChannel ends a call whose conversation is over: the host's TOver,
// then what is left up to the helper's TDone, read within cancelGrace.
// The channel, in step, is kept for the next call.
func (v *actExec) endChannel(ctx context.Context) error {
	defer v.carry(ctx)
	late := time.AfterFunc(cancelGrace, func() {
		v.abort(fmt.Errorf("the sandbox's helper did not end the call within %v", cancelGrace))
	})
	defer late.Stop()
	if err := v.w.Frame(protocol.TOver, nil); err != nil {
		return v.stop(ctx, err)
	}
	for {
		_, _, err := v.r.Next()
		if err == nil {
			continue
		}
		if _, ended := v.r.Ended(); !ended {
			return v.stop(ctx, err)
		}
		break
	}
	actErr, _ := v.actEnd()
	if actErr != nil {
		return v.stop(ctx, actErr)
	}
	v.m.keep(v.slug, v.ch)
	return nil
}

// actEnd is the act's end as its TDone told: nil for a clean exit, a
// helperExitError for another, or an error for a TDone that does not
// parse; ended is false while no TDone came.
func (v *actExec) actEnd() (err error, ended bool) {
	p, ended := v.r.Ended()
	if !ended {
		return nil, false
	}
	d, derr := protocol.DecodeDone(p)
	switch {
	case derr != nil:
		return derr, true
	case d.Code != 0:
		return &helperExitError{code: int(min(d.Code, 255)), stderr: agenttext.FirstLine(agenttext.Cap(d.Stderr, protocol.MaxDoneStderr))}, true
	}
	return nil, true
}

// carriedSpec is the exec a call over a channel saves, spec, as the log
// and the audit trail show it (see carry): the line with its effect
// (shownAct) or the act's exec itself, noted as carried.
func carriedSpec(spec box.ExecSpec) *box.ExecSpec {
	if spec.Shown == nil {
		spec.Shown = &box.Shown{Spec: spec}
	}
	spec.Shown.Note = strings.TrimPrefix(spec.Shown.Note+"; carried over the sandbox's kept channel", "; ")
	return &spec
}

// carry logs and audits the call as the exec it saved, once, with how the
// call ended: the command's exit code, or -1 for a call that failed.
func (v *actExec) carry(ctx context.Context) {
	spec := v.carried
	if spec == nil {
		return
	}
	v.carried = nil
	spec.Carried = &box.Carried{ExitCode: v.exit, Took: time.Since(v.start)}
	_, _ = v.m.Repo.Box(v.slug).Exec(ctx, *spec, box.Streams{})
}
