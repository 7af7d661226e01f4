package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/secrets"
)

// actExec is the helper's act running in the sandbox: the pipes the
// conversation goes over, and the exec's outcome when it ends.
type actExec struct {
	m    *Agent
	slug string
	// w and r carry the conversation: over the exec's pipes inW and
	// outR, or over ch, a channel kept open (then done is unused).
	w          *protocol.Writer
	r          *protocol.Reader
	inW        *io.PipeWriter
	outR       *io.PipeReader
	done       chan error
	ch         *channel
	cancelExec context.CancelFunc
	// Over a channel: the exec the call saved, logged and audited at
	// its end (carry), when it started, and the command's exit code once
	// its result came (-1 until then).
	carried *box.ExecSpec
	start   time.Time
	exit    int

	mu sync.Mutex
	// cut is why abort ended the conversation (a helper that did not
	// answer in time, a sandbox that ended under it): the reads and writes
	// then fail only as its consequence ("read/write on closed pipe").
	cut error
	// begun is set once the helper answered: from then on, an exec the
	// engine ends because the container is not running means the sandbox
	// ended during the call, not that it was stopped before it.
	begun bool
}

// startAct starts the helper's act for c in the sandbox: over the Agent's
// channel to it when it keeps them, else in an exec of its own.
func (m *Agent) startAct(execCtx context.Context, cancelExec context.CancelFunc, c *call) *actExec {
	if m.chans != nil {
		return m.startOnChannel(cancelExec, c)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	v := &actExec{m: m, slug: c.slug, inW: inW, outR: outR, done: make(chan error, 1), cancelExec: cancelExec}
	v.w, v.r = protocol.NewWriter(inW), protocol.NewReader(outR)
	go func() {
		var engineErr strings.Builder
		spec := actSpec(c)
		spec.StdinKey = protocol.Describe
		res, err := m.Repo.Box(c.slug).Exec(execCtx, spec,
			box.Streams{Stdin: inR, Stdout: outW, Stderr: &engineErr})
		if err == nil && res.ExitCode != 0 {
			err = &helperExitError{code: res.ExitCode, stderr: agenttext.FirstLine(engineErr.String())}
		}
		inR.CloseWithError(errOrClosed(err))
		outW.CloseWithError(errOrEOF(err))
		v.done <- err
	}()
	return v
}

// actSpec is the exec of c's act: the action's environment, a command's
// secrets, and the line with its effect that the log shows (shownAct).
func actSpec(c *call) box.ExecSpec {
	spec := box.ExecSpec{Interactive: true, OwnGroup: true, Cmd: c.h.Argv(protocol.CmdAct{}), Env: c.a.Env}
	if c.a.Op == protocol.OpRun || c.a.Op == protocol.OpSetup {
		spec.Secrets = c.sec.Env()
	}
	spec.Shown = shownAct(c.h, c.a, spec, c.sec)
	return spec
}

// stop ends the conversation after err and returns the failure to report:
// what the exec's outcome says (failure) when it says something, since err
// is then only its consequence; else err.
func (v *actExec) stop(ctx context.Context, err error) error {
	if v.ch != nil {
		return v.stopChannel(ctx, err)
	}
	v.inW.CloseWithError(err)
	v.outR.CloseWithError(err)
	if why := v.failure(ctx, <-v.done); why != nil {
		return why
	}
	return err
}

// failure is what went wrong by the exec's outcome: why abort cut it, the
// sandbox's end under a call that had begun (its helper killed with it, or
// the engine cutting the exec), or the engine's refusal of the exec (no
// such container, paused, stopped before the call); nil when it says
// nothing of the kind.
func (v *actExec) failure(ctx context.Context, execErr error) error {
	v.mu.Lock()
	cut, begun := v.cut, v.begun
	v.mu.Unlock()
	var engine *box.Error
	var exited *helperExitError
	switch {
	case cut != nil:
		return cut
	case errors.As(execErr, &exited), begun && errors.Is(execErr, box.ErrNotRunning):
		if ended := v.m.endedUnder(ctx, v.slug); ended != nil {
			return ended
		}
		if exited == nil {
			return ExecError(ctx, v.m.Repo, v.slug, execErr)
		}
	case errors.As(execErr, &engine):
		return ExecError(ctx, v.m.Repo, v.slug, execErr)
	}
	return nil
}

// markBegun records that the helper answered the call.
func (v *actExec) markBegun() {
	v.mu.Lock()
	v.begun = true
	v.mu.Unlock()
}

// abort cuts a conversation whose helper does not answer in time, or
// whose sandbox ended under it; the first cause is the one stop reports.
func (v *actExec) abort(err error) {
	v.mu.Lock()
	if v.cut == nil {
		v.cut = err
	}
	v.mu.Unlock()
	if v.ch != nil {
		v.ch.kill(err)
	} else {
		v.inW.CloseWithError(err)
		v.outR.CloseWithError(err)
	}
	v.cancelExec()
}

// end closes the conversation after a snapshot and waits for the exec.
func (v *actExec) end(ctx context.Context) error {
	if v.ch != nil {
		return v.endChannel(ctx)
	}
	v.inW.Close()
	// The output ends when the exec does, with its error.
	_, _ = io.Copy(io.Discard, v.outR)
	execErr := <-v.done
	if why := v.failure(ctx, execErr); why != nil {
		return why
	}
	return execErr
}

// endedUnder is the sandbox's end when its container is not running,
// waiting up to a second for the engine to record it: the helper of a call
// dies with the container's PID 1, and its exec may end a moment before
// the engine marks the container exited. It is nil while the container
// runs.
func (m *Agent) endedUnder(ctx context.Context, slug string) *EndedError {
	ctx = context.WithoutCancel(ctx)
	for i := 0; ; i++ {
		in, err := m.Repo.Box(slug).Inspect(ctx)
		if err != nil {
			return nil
		}
		if in.State != "running" && in.State != "paused" {
			return &EndedError{Slug: slug, Container: m.Repo.Names(slug).Container, ExitCode: in.ExitCode}
		}
		if i == 10 {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// answerBound is how long awaitResult waits for the result: the command's
// timeout (0: none) and what ends the conversation when it is over.
type answerBound struct {
	timeout time.Duration
	abort   func(error)
}

// watchCancel tells the helper to kill the command when ctx ends or the
// command's timeout is well past, and aborts the conversation when the
// result does not follow within cancelGrace. It returns when stop closes.
func watchCancel(ctx context.Context, w *protocol.Writer, b answerBound, stop <-chan struct{}) {
	var late <-chan time.Time
	if b.timeout > 0 {
		t := time.NewTimer(b.timeout + resultSlack)
		defer t.Stop()
		late = t.C
	}
	select {
	case <-ctx.Done():
	case <-late:
	case <-stop:
		return
	}
	_ = w.Frame(protocol.TCancel, nil)
	t := time.NewTimer(cancelGrace)
	defer t.Stop()
	select {
	case <-t.C:
		b.abort(fmt.Errorf("the sandbox did not end the command within %v of the cancel", cancelGrace))
	case <-stop:
	}
}

// awaitResult reads the command's output until its result. If ctx ends
// first, or the command's timeout is well past, the helper is told to kill
// the command; the result still comes, or b.abort ends the wait.
func (m *Agent) awaitResult(ctx context.Context, r *protocol.Reader, w *protocol.Writer, out *Output, limit int64, sec *secrets.Values, b answerBound) (*result.Act, error) {
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		watchCancel(ctx, w, b, stop)
	}()
	defer watch.Wait()
	defer close(stop)
	// Output passes the secrets' mask before anything keeps or shows it.
	stdout, stderr := newKept(limit, sec), newKept(limit, sec)
	keepOut, keepErr := sec.NewWriter(stdout), sec.NewWriter(stderr)
	showOut, showErr := sec.NewWriter(out.writer(protocol.TStdout)), sec.NewWriter(out.writer(protocol.TStderr))
	for {
		t, p, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("reading the sandbox's answer: %w", hostrepo.Unexpected(err))
		}
		switch t {
		case protocol.TStdout:
			_, _ = keepOut.Write(p)
			if showOut != nil {
				_, _ = showOut.Write(p)
			}
		case protocol.TStderr:
			_, _ = keepErr.Write(p)
			if showErr != nil {
				_, _ = showErr.Write(p)
			}
		case protocol.TCut:
			c, err := protocol.DecodeCut(p)
			if err != nil {
				return nil, err
			}
			// The mask starts afresh past the gap; text() masks what the
			// tail begins with of a value cut in two.
			if c.Stream == protocol.TStdout {
				_ = secrets.CloseWriter(keepOut, true)
				stdout.mark(c.N)
				keepOut = sec.NewWriter(stdout)
			} else {
				_ = secrets.CloseWriter(keepErr, true)
				stderr.mark(c.N)
				keepErr = sec.NewWriter(stderr)
			}
		case protocol.TResult:
			pr, err := protocol.DecodeResult(p)
			if err != nil {
				return nil, err
			}
			_ = secrets.CloseWriter(keepOut, pr.OutCut > 0)
			_ = secrets.CloseWriter(showOut, pr.OutCut > 0)
			_ = secrets.CloseWriter(keepErr, pr.ErrCut > 0)
			_ = secrets.CloseWriter(showErr, pr.ErrCut > 0)
			if pr.Err != "" {
				_, _ = stderr.Write([]byte(sec.Redact(pr.Err)))
			}
			outLog, errLog := savedPath(pr.OutLog), savedPath(pr.ErrLog)
			return &result.Act{
				ExitCode: pr.ExitCode, TimedOut: pr.TimedOut, Cancelled: pr.Cancelled,
				Stdout: stdout.text("stdout", outLog, pr.OutLogPart), Stderr: stderr.text("stderr", errLog, pr.ErrLogPart),
				StdoutCut: stdout.cut, StderrCut: stderr.cut, StdoutLog: outLog, StderrLog: errLog, NoShell: pr.NoShell, Replaced: int(min(pr.Replaced, 1<<31)), OpErr: pr.Err,
			}, nil
		case protocol.TFail:
			return nil, &protocol.FailError{Msg: string(p)}
		default:
			return nil, fmt.Errorf("unexpected frame %q from the sandbox helper", t)
		}
	}
}

// keptOutput is what a result keeps of one output stream: the first half
// of its limit and the last half, and the count of bytes between them,
// elided here (a stream that came whole) or by the helper (marked by a
// TCut). What the helper sends is bounded here all the same.
type keptOutput struct {
	half, tailMax int
	head          []byte
	tail          []byte // the bytes past the head; the last tailMax of them count
	cut           int64
	marked        bool
	// sec masks what the tail may begin with after the helper's cut: the
	// end of a value whose start was left out.
	sec *secrets.Values
}

func newKept(limit int64, sec *secrets.Values) *keptOutput {
	return &keptOutput{half: int(limit / 2), tailMax: int(limit - limit/2), sec: sec}
}

func (k *keptOutput) Write(p []byte) (int, error) {
	n := len(p)
	if !k.marked {
		take := min(k.half-len(k.head), len(p))
		k.head = append(k.head, p[:max(take, 0)]...)
		p = p[max(take, 0):]
	}
	k.tail = append(k.tail, p...)
	if len(k.tail) > 2*k.tailMax {
		k.trim()
	}
	return n, nil
}

// mark records n bytes the helper left out at this point of the stream.
func (k *keptOutput) mark(n uint64) {
	if !k.marked {
		// What came before the helper's cut is head, however long the
		// masking made it.
		k.trim()
		k.head, k.tail, k.marked = append(k.head, k.tail...), nil, true
	}
	k.cut += int64(min(n, 1<<62))
}

func (k *keptOutput) trim() {
	if drop := len(k.tail) - k.tailMax; drop > 0 {
		k.cut += int64(drop)
		k.tail = append(k.tail[:0], k.tail[drop:]...)
	}
}

// text is the stream as kept, the elided middle named by its size and,
// when the helper saved the stream, where the whole of it is.
func (k *keptOutput) text(stream, saved string, part bool) string {
	k.trim()
	if k.cut == 0 {
		return string(k.head) + string(k.tail)
	}
	where := ""
	switch {
	case saved != "" && part:
		where = fmt.Sprintf("; its first %d MiB are in %s", maxSavedOutput>>20, saved)
	case saved != "":
		where = fmt.Sprintf("; all of %s is in %s", stream, saved)
	}
	head := string(k.head)
	if head != "" && !strings.HasSuffix(head, "\n") {
		head += "\n"
	}
	// The tail starts wherever the cut fell, maybe inside a value.
	tail := k.sec.RedactPart(string(k.tail))
	return fmt.Sprintf("%s[... %s bytes elided%s ...]\n%s", head, agenttext.Thousands(k.cut), where, tail)
}

// maxSavedOutput is how much of a stream the helper saves (its maxSaved).
const maxSavedOutput = 32 << 20

// savedPath is the helper's name for a saved stream, "" unless it is one
// (the helper is the agent's to replace: its words reach a person only
// when they look like what it should say).
func savedPath(p string) string {
	if !strings.HasPrefix(p, OutputDir+"/") || agenttext.Shown(p) != p || len(p) > 200 {
		return ""
	}
	return p
}

// OutputDir is where the helper saves a stream longer than its limit.
const OutputDir = "/tmp/litterbox/out"

func (o *Output) writer(t byte) io.Writer {
	switch {
	case o == nil:
		return nil
	case t == protocol.TStdout:
		return o.Stdout
	}
	return o.Stderr
}

func errOrClosed(err error) error {
	if err == nil {
		return io.ErrClosedPipe
	}
	return err
}

func errOrEOF(err error) error {
	if err == nil {
		return io.EOF
	}
	return err
}

// ExecError explains a failed docker exec in the sandbox's terms.
func ExecError(ctx context.Context, r *hostrepo.Repo, slug string, err error) error {
	switch {
	case errors.Is(err, box.ErrNotFound):
		return r.MissingOrNotFound(ctx, slug)
	case errors.Is(err, box.ErrPaused):
		return NotRunning(slug, "paused")
	case errors.Is(err, box.ErrNotRunning):
		// Podman does not say which: ask.
		if in, ierr := r.Box(slug).Inspect(ctx); ierr == nil {
			return NotRunning(slug, in.State)
		}
		return NotRunning(slug, "exited")
	}
	return err
}

// helperExitError is the helper's exit with no answer (killed, or dead of
// a crash it printed to stderr).
type helperExitError struct {
	code   int
	stderr string
}

func (e *helperExitError) Error() string {
	return fmt.Sprintf("sandbox helper exited with code %d: %s", e.code, e.stderr)
}

// NotRunning says a sandbox in state cannot take commands until resumed.
func NotRunning(slug string, state box.State) error {
	return &NotRunningError{Slug: slug, State: state}
}

// NotRunningError is a call to a sandbox that is not running.
type NotRunningError struct {
	Slug  string
	State box.State
}

func (e *NotRunningError) Error() string {
	word := "stopped"
	if e.State == "paused" {
		word = "paused"
	}
	return fmt.Sprintf("sandbox '%s' is %s; it must be resumed first (litterbox resume %s)", e.Slug, word, e.Slug)
}

// IdleError is a call that found its sandbox stopped by PID 1 for being
// idle, having done nothing: the lifecycle starts the sandbox again, with
// its services, and sends the call again (sandbox.Sandbox).
type IdleError struct {
	Slug  string
	State box.State
}

func (e *IdleError) Error() string {
	return fmt.Sprintf("sandbox '%s' stopped after being idle; it must be started again first (litterbox resume %s)", e.Slug, e.Slug)
}

// Unwrap is the NotRunningError the call found, for errors.As.
func (e *IdleError) Unwrap() error { return &NotRunningError{Slug: e.Slug, State: e.State} }

// Bounds on the wait for the helper's result: resultSlack past the
// command's own timeout, after which the host asks for the kill itself, and
// cancelGrace past a cancel (the caller's or that one), after which it
// stops waiting. The helper itself answers within about 2 s of either (the
// kill, then a bounded drain of the output). Variables for the tests.
var (
	resultSlack = 10 * time.Second
	cancelGrace = 10 * time.Second
)
