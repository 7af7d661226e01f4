package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/secrets"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
)

// OutputCap is how much of each output stream of a command is kept.
const OutputCap = 256 << 10

func (m *Manager) loadSnap(slug string) (snapshot.State, error) {
	var st snapshot.State
	data, err := os.ReadFile(m.layout().Snapshot(slug))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

func (m *Manager) saveSnap(slug string, st snapshot.State) error {
	return layout.WriteFileAtomic(m.layout().Snapshot(slug), layout.JSON(st))
}

func (m *Manager) index(slug string) gitcli.Index {
	return gitcli.Index(m.layout().Index(slug))
}

// mirror is the sandbox's rules work tree: its .gitignore and
// .gitattributes files, as they are in the container.

func (m *Manager) snapStore(slug string, lim layout.Limits) *snapshot.Store {
	n := m.Names(slug)
	return &snapshot.Store{
		MaxFile: lim.MaxFileSize, MaxCall: lim.MaxCallSize,
		Git: m.Git, GitDir: m.GitDir, Ref: n.Ref, Branch: n.Branch,
		Index: m.index(slug), Rules: m.layout().Ignore(slug), Tmp: m.layout().TmpOf(slug),
		Author: m.agentIdent(slug), Committer: func(ctx context.Context) gitcli.Ident { return m.committer(ctx, slug) },
	}
}

// action is one agent call that may change files.
type action struct {
	op      string // a protocol.Op*
	arg     string // workdir (run, setup) or path (write, rm, upload)
	cmd     string // run, setup
	env     map[string]string
	timeout time.Duration
	content io.Reader // write, upload
	size    int64
	message string // snapshot subject and body
	// kind and detail, when set, make the message instead, once the
	// secrets are known: a value is masked before the detail is cut, so
	// no piece of one survives the cut.
	kind, detail string
	// output, when set, gets the command's output as it comes, uncapped;
	// the result keeps the first OutputCap bytes of each stream all the same.
	output *Output
}

// Output receives a command's streams as they come.
type Output struct {
	Stdout, Stderr io.Writer
}

// ActResult is what an agent action did.
type ActResult struct {
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// StdoutCut and StderrCut count the bytes dropped beyond OutputCap.
	StdoutCut int64 `json:"stdout_cut,omitempty"`
	StderrCut int64 `json:"stderr_cut,omitempty"`
	// Cancelled: the caller gave up (Ctrl-C, an MCP cancel); every process
	// of the command was killed and what it had changed was committed.
	Cancelled bool `json:"cancelled,omitempty"`
	// Snapshot is the commit made for the call's changes, "" when nothing
	// git would track changed.
	Snapshot string `json:"snapshot"`
	Bounds
	// noShell: the image has no /bin/sh, so no command ran.
	noShell bool
	// dirsRead and fullScan say how the scan went (tests, benchmarks).
	dirsRead int
	fullScan bool
}

// Bounds is what a call's result says of the limits on what reaches the
// host: files left out of its snapshot, and /src over its disk guard.
type Bounds struct {
	Withheld []snapshot.Withheld `json:"withheld,omitempty"`
	// WithheldMore counts the withheld files beyond those listed.
	WithheldMore int       `json:"withheld_more,omitempty"`
	DiskOver     *DiskOver `json:"disk_over,omitempty"`
	// ConfigNote says why the config's bounds were not used (those fixed
	// at create were).
	ConfigNote string `json:"config_note,omitempty"`
	// maxCall is the call's budget, to tell of a file larger than it.
	maxCall int64
}

// DiskOver says /src holds more than the sandbox's disk guard allows.
type DiskOver struct {
	Used  int64 `json:"used"`
	Limit int64 `json:"limit"`
}

// DiskFullError refuses a write while /src is over its disk guard.
type DiskFullError struct {
	Name string
	DiskOver
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("sandbox '%s' holds %s in /src, over its limit of %s ([docker] disk): writes are refused until files are removed (bash: rm ...) or the limit is raised in .litterbox.local.toml", e.Name, HumanSize(e.Used), HumanSize(e.Limit))
}

// Truncated reports whether output was cut.
func (r *ActResult) Truncated() bool { return r.StdoutCut > 0 || r.StderrCut > 0 }

// act runs one action in the sandbox and commits what it changed, holding the
// sandbox lock for the whole call.
func (m *Manager) act(ctx context.Context, slug string, a action) (*ActResult, error) {
	unlock, err := m.lock(ctx, slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return m.actLocked(ctx, slug, a)
}

// maxShownInput bounds the content a logged write line carries.
const maxShownInput = 64 << 10

// shownAct is what the log shows for an agent call: the same effect
// without the helper's protocol, a line that pasted runs the command or
// writes the file (the snapshot is left out). Content too large, not text
// or holding a secret, an upload and a scan show the call itself; a
// secret in a command is masked.
func shownAct(h *helperBinary, a action, spec box.ExecSpec, sec *secrets.Values) *box.Shown {
	const note = "the snapshot left out"
	switch a.op {
	case protocol.OpRun, protocol.OpSetup:
		return &box.Shown{Spec: box.ExecSpec{Workdir: a.arg, Env: spec.Env, Secrets: spec.Secrets, Cmd: []string{"/bin/sh", "-c", sec.Redact(a.cmd)}}, Note: note}
	case protocol.OpRemove:
		return &box.Shown{Spec: box.ExecSpec{Cmd: h.argv(protocol.CmdRm{Path: a.arg})}, Note: note}
	case protocol.OpWrite:
		r, ok := a.content.(*bytes.Reader)
		if !ok || a.size > maxShownInput {
			return nil
		}
		data := make([]byte, a.size)
		if n, _ := r.ReadAt(data, 0); int64(n) != a.size || !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 || sec.Holds(data) != "" {
			return nil
		}
		return &box.Shown{Spec: box.ExecSpec{Interactive: true, Cmd: h.argv(protocol.CmdPut{Path: a.arg})}, Input: data, HasInput: true, Note: note}
	}
	return nil
}

// commitMessage is the snapshot message of a, its secrets masked.
func (a action) commitMessage(sec *secrets.Values) string {
	if a.kind != "" {
		return commitMessage(a.kind, sec.Redact(a.detail))
	}
	return sec.Redact(a.message)
}

// timeoutMS is d in the helper's whole milliseconds, rounded up: 0 means
// no limit there, so a limit under 1 ms must not become 0.
func timeoutMS(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64((d + time.Millisecond - 1) / time.Millisecond)
}

// snapshotGrace bounds the scan and commit after the caller gave up.
const snapshotGrace = 2 * time.Minute

// actLocked holds one conversation with the sandbox's helper: the request,
// the command's output as it comes, its result, then the snapshot. When ctx
// ends while the command runs, the helper is told to kill it, and the call
// still commits what the command changed: the exec itself runs on.
func (m *Manager) actLocked(ctx context.Context, slug string, a action) (*ActResult, error) {
	st, err := m.loadSnap(slug)
	if err != nil {
		return nil, err
	}
	h, rec, err := m.helperFor(ctx, slug)
	if err != nil {
		return nil, err
	}
	lim, specs, limNote := m.callConfig(ctx, rec)
	sec, err := m.secrets.Resolve(ctx, specs)
	if err != nil {
		return nil, fmt.Errorf("%w (the call did not run)", err)
	}
	over := diskOver(&st, lim)
	if over != nil && (a.op == protocol.OpWrite || a.op == protocol.OpUpload) {
		return nil, &DiskFullError{Name: slug, DiskOver: *over}
	}
	if a.op == protocol.OpWrite && a.size > lim.MaxFileSize {
		return nil, fmt.Errorf("content is %s, over max-file-size (%s): the file could not be committed", HumanSize(a.size), config.FormatSize(lim.MaxFileSize))
	}
	req := &protocol.Request{
		Version: protocol.Version, Op: a.op, OldGen: st.Gen, NewGen: st.Gen + 1,
		Cap: OutputCap, Stream: a.output != nil, TimeoutMS: timeoutMS(a.timeout),
		ContentLen: uint64(a.size), Prune: st.Skipped(), MaxFile: uint64(lim.MaxFileSize), Measure: over != nil && st.PID1Sizes,
		Rescan: st.Rescan,
	}
	switch a.op {
	case protocol.OpRun, protocol.OpSetup:
		req.Dir, req.Cmd = a.arg, a.cmd
	default:
		req.Path = a.arg
	}
	execCtx, cancelExec := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelExec()
	if dl, ok := ctx.Deadline(); ok {
		execCtx, cancelExec = context.WithDeadline(execCtx, dl.Add(snapshotGrace))
		defer cancelExec()
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var engineErr strings.Builder
	execDone := make(chan error, 1)
	go func() {
		spec := box.ExecSpec{Interactive: true, OwnGroup: true, Cmd: h.argv(protocol.CmdAct{}), Env: a.env, StdinKey: protocol.Describe}
		if a.op == protocol.OpRun || a.op == protocol.OpSetup {
			spec.Secrets = sec.Env()
		}
		spec.Shown = shownAct(h, a, spec, sec)
		res, err := m.Provider.Exec(execCtx, m.Names(slug).Container, spec,
			box.Streams{Stdin: inR, Stdout: outW, Stderr: &engineErr})
		if err == nil && res.ExitCode != 0 {
			err = &helperExitError{code: res.ExitCode, stderr: agenttext.FirstLine(engineErr.String())}
		}
		inR.CloseWithError(errOrClosed(err))
		outW.CloseWithError(errOrEOF(err))
		execDone <- err
	}()
	// stop ends the conversation after err and returns the failure to
	// report: the engine's refusal of the exec (no such container, paused)
	// when there was one, since err is then only its consequence; else err.
	stop := func(err error) error {
		inW.CloseWithError(err)
		outR.CloseWithError(err)
		var engine *box.Error
		var exited *helperExitError
		execErr := <-execDone
		switch {
		case errors.As(execErr, &engine):
			return m.execError(ctx, slug, execErr)
		case errors.As(execErr, &exited):
			// A helper killed from outside: most likely the container
			// itself stopped under it.
			if m.stoppedUnder(ctx, slug) {
				return fmt.Errorf("sandbox '%s' stopped during the call (docker logs %s says why); its work is on the branch up to the last call: litterbox resume %s", slug, m.Names(slug).Container, slug)
			}
		}
		return err
	}
	fail := func(err error) (*ActResult, error) { return nil, stop(err) }
	w := protocol.NewWriter(inW)
	r := protocol.NewReader(outR)
	if err := w.Frame(protocol.TRequest, req.Encode()); err != nil {
		return fail(err)
	}
	if a.content != nil {
		if err := w.Raw(a.content, a.size); err != nil {
			return fail(fmt.Errorf("sending the content: %w", err))
		}
	}
	// A helper that does not answer in time (one the agent replaced, say)
	// must not hold the call, nor the sandbox's lock, for ever.
	abort := func(err error) {
		inW.CloseWithError(err)
		outR.CloseWithError(err)
		cancelExec()
	}
	res, err := m.awaitResult(ctx, r, w, a.output, sec, answerBound{timeout: a.timeout, abort: abort})
	if err != nil {
		return fail(err)
	}
	store := m.snapStore(slug, lim)
	store.Secrets = sec
	taken, snapErr := store.Take(execCtx, snapshot.Conversation{R: r, W: w}, &st, a.commitMessage(sec))
	if snapErr != nil {
		// The index may hold changes no commit has: rebuild it next time.
		store.Forget(&st)
		if cause := stop(snapErr); cause != snapErr {
			return res, cause
		}
		return res, fmt.Errorf("the command ran, but its changes could not be committed (they are kept and retried on the next call): %w", snapErr)
	}
	inW.Close()
	if _, err := io.Copy(io.Discard, outR); err != nil {
		return res, m.execError(ctx, slug, err)
	}
	if err := <-execDone; err != nil {
		return res, m.execError(ctx, slug, err)
	}
	res.Snapshot, res.dirsRead, res.fullScan = taken.Commit, taken.DirsRead, taken.Full
	res.Withheld, res.WithheldMore, res.DiskOver = taken.Withheld, taken.WithheldMore, diskOver(&st, lim)
	res.maxCall = lim.MaxCallSize
	if len(res.Withheld) > 0 || res.DiskOver != nil {
		res.ConfigNote = limNote
	}
	st.Gen++
	if err := m.saveSnap(slug, st); err != nil {
		return res, err
	}
	return res, nil
}

// stoppedUnder reports whether the sandbox's container is not running,
// waiting up to a second for the engine to record its end: the helper of a
// call dies with the container's PID 1, and its exec may end a moment
// before the engine marks the container exited.
func (m *Manager) stoppedUnder(ctx context.Context, slug string) bool {
	ctx = context.WithoutCancel(ctx)
	for i := 0; ; i++ {
		in, err := m.Provider.Inspect(ctx, m.Names(slug).Container)
		if err != nil {
			return false
		}
		if in.State != "running" {
			return true
		}
		if i == 10 {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// callConfig is what a call honours of the config as it is now: its bounds,
// so one raised in .litterbox.local.toml holds from the next call on, and
// where its secrets come from. When the config cannot be read or may not
// loosen them, those fixed at create hold, and note says why.
func (m *Manager) callConfig(ctx context.Context, rec *layout.Record) (lim layout.Limits, specs map[string]config.SecretSpec, note string) {
	cfg, err := config.Load(m.Root)
	if err == nil {
		_, err = m.allowWeakenings(ctx, slices.DeleteFunc(cfg.Weakenings(), func(w config.Weakening) bool {
			return !limitKeys[w.Key] && !strings.HasPrefix(w.Key, "secrets.")
		}))
	}
	if err != nil {
		return rec.Limits.OrDefaults(), rec.Secrets, "the config's bounds are not used, those of create hold: " + err.Error()
	}
	return layout.LimitsOf(cfg), cfg.Secrets, ""
}

// limitKeys are the weakenings of the bounds a call reads afresh.
var limitKeys = map[string]bool{"docker.disk": true, "snapshot.max-file-size": true, "snapshot.max-call-size": true}

// diskOver reports /src over the disk guard, by the helper's last count.
func diskOver(st *snapshot.State, lim layout.Limits) *DiskOver {
	if used := int64(min(st.Used(), 1<<62)); used > lim.Disk {
		return &DiskOver{Used: used, Limit: lim.Disk}
	}
	return nil
}

// Bounds on the wait for the helper's result: resultSlack past the
// command's own timeout, after which the host asks for the kill itself, and
// cancelGrace past a cancel (the caller's or that one), after which it
// stops waiting. The helper itself answers within about 2 s of either (the
// kill, then a bounded drain of the output). Variables for the tests.
var (
	resultSlack = 10 * time.Second
	cancelGrace = 10 * time.Second
)

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
func (m *Manager) awaitResult(ctx context.Context, r *protocol.Reader, w *protocol.Writer, out *Output, sec *secrets.Values, b answerBound) (*ActResult, error) {
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
	var stdout, stderr outputBuf
	keepOut, keepErr := sec.NewWriter(&stdout), sec.NewWriter(&stderr)
	showOut, showErr := sec.NewWriter(out.writer(protocol.TStdout)), sec.NewWriter(out.writer(protocol.TStderr))
	for {
		t, p, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("reading the sandbox's answer: %w", unexpected(err))
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
			return &ActResult{
				ExitCode: pr.ExitCode, TimedOut: pr.TimedOut, Cancelled: pr.Cancelled,
				Stdout: stdout.String(), Stderr: stderr.String(),
				StdoutCut: int64(pr.OutCut) + stdout.cut, StderrCut: int64(pr.ErrCut) + stderr.cut, noShell: pr.NoShell,
			}, nil
		case protocol.TFail:
			return nil, &protocol.FailError{Msg: string(p)}
		default:
			return nil, fmt.Errorf("unexpected frame %q from the sandbox helper", t)
		}
	}
}

// outputBuf keeps the first OutputCap bytes written to it and counts the rest.
type outputBuf struct {
	strings.Builder
	cut int64
}

func (c *outputBuf) Write(p []byte) (int, error) {
	n := min(len(p), max(OutputCap-c.Len(), 0))
	c.Builder.Write(p[:n])
	c.cut += int64(len(p) - n)
	return len(p), nil
}

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

// execError explains a failed docker exec in the sandbox's terms.
func (m *Manager) execError(ctx context.Context, slug string, err error) error {
	switch {
	case errors.Is(err, box.ErrNotFound):
		return m.missingOrNotFound(ctx, slug)
	case errors.Is(err, box.ErrPaused):
		return notRunning(slug, "paused")
	case errors.Is(err, box.ErrNotRunning):
		// Podman does not say which: ask.
		if in, ierr := m.Provider.Inspect(ctx, m.Names(slug).Container); ierr == nil {
			return notRunning(slug, in.State)
		}
		return notRunning(slug, "exited")
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

// notRunning says a sandbox in state cannot take commands until resumed.
func notRunning(slug string, state box.State) error {
	word := "stopped"
	if state == "paused" {
		word = "paused"
	}
	return fmt.Errorf("sandbox '%s' is %s; it must be resumed first (litterbox resume %s)", slug, word, slug)
}

func (m *Manager) agentIdent(slug string) gitcli.Ident {
	return gitcli.Ident{Name: slug + " (litterbox)", Email: "litterbox@localhost"}
}

// committer is the user's identity when git has one, else the agent's, so
// snapshots work on machines with no git identity at all.
func (m *Manager) committer(ctx context.Context, slug string) gitcli.Ident {
	m.identOnce.Do(func() {
		id, err := m.Git.Identity(ctx)
		if err == nil && id.Name != "" && id.Email != "" {
			m.ident = &id
		}
	})
	if m.ident != nil {
		return gitcli.Ident{}
	}
	return m.agentIdent(slug)
}

// commitMessage builds "<kind>: <detail>" with a subject under 72 characters
// and the full detail in the body when the subject had to be shortened.
// The detail comes from the agent, and git log prints messages as they
// are: control characters are written out as escapes.
//
// The body is capped at agenttext.MaxMessage bytes: a command of megabytes still runs,
// but its record on the branch is its head, its size and its digest.
func commitMessage(kind, detail string) string {
	detail = agenttext.Inert(detail)
	subject := kind + ": " + agenttext.FirstLine(agenttext.Cap(detail, agenttext.MaxMessage))
	full := strings.TrimSpace(detail)
	if len(full) > agenttext.MaxMessage {
		sum := sha256.Sum256([]byte(full))
		full = agenttext.Cap(full, agenttext.MaxMessage) + fmt.Sprintf("\n(cut: %d bytes in all, sha256 %s; the audit log keeps the same head and digest)", len(full), hex.EncodeToString(sum[:]))
	}
	if len(subject) < 72 && !strings.Contains(full, "\n") {
		return subject + "\n"
	}
	if len(subject) >= 72 {
		cut := 67
		for cut > 0 && !utf8.RuneStart(subject[cut]) {
			cut--
		}
		subject = subject[:cut] + "..."
	} else {
		subject += " ..."
	}
	return subject + "\n\n" + full + "\n"
}

func ensureDir(d string) string {
	_ = os.MkdirAll(d, 0o755)
	return d
}

// unexpected turns a clean EOF into an error: the answer stopped short.
func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Notes are the lines a caller shows for b: the files withheld over
// max-file-size with the ways out (the first few), those past max-call-size
// together, the disk guard, and why the config's bounds were not used.
func (b Bounds) Notes() []string {
	const maxLines = 5
	var out []string
	later, bigMore := b.WithheldMore, 0
	var laterNames []string
	for _, w := range b.Withheld {
		if w.Limit == snapshot.LimitCall {
			later++
			if len(laterNames) < 3 {
				laterNames = append(laterNames, agenttext.Shown(agenttext.Elide(w.Path, 120)))
			}
			continue
		}
		if len(out) == maxLines {
			bigMore++
			continue
		}
		kept := "it stays in the sandbox"
		if w.Tracked {
			kept += " and the branch keeps its last committed version"
		}
		if w.InName {
			out = append(out, fmt.Sprintf("not committed: the path %s holds the value of secret %s (shown masked); it stays in the sandbox. Rename it and the next call commits it",
				agenttext.Shown(w.Path), w.Secret))
			continue
		}
		if w.Limit == snapshot.LimitPath {
			out = append(out, pathNote(w))
			continue
		}
		if w.Limit == snapshot.LimitSecret {
			out = append(out, fmt.Sprintf("not committed: %s holds the value of secret %s; %s. Take the value out of the file (read $%s instead) and the next call commits it",
				agenttext.Shown(w.Path), w.Secret, kept, w.Secret))
			continue
		}
		raise := "raise [snapshot] max-file-size"
		if b.maxCall > 0 && w.Size > b.maxCall {
			raise += " and max-call-size (at least as large)"
		}
		out = append(out, fmt.Sprintf("not committed: %s (%s) is over max-file-size (%s); %s. Add it to .gitignore, or %s in .litterbox.local.toml",
			agenttext.Shown(w.Path), HumanSize(w.Size), config.FormatSize(w.Max), kept, raise))
	}
	if bigMore > 0 {
		out = append(out, fmt.Sprintf("not committed: %d more file(s) over max-file-size", bigMore))
	}
	if later > 0 {
		if later > len(laterNames) {
			laterNames = append(laterNames, fmt.Sprintf("and %d more", later-len(laterNames)))
		}
		out = append(out, fmt.Sprintf("not committed yet: %d file(s) (%s) are past max-call-size (%s) or the names one call carries; the next call commits them",
			later, strings.Join(laterNames, ", "), config.FormatSize(b.maxCall)))
	}
	if d := b.DiskOver; d != nil {
		out = append(out, fmt.Sprintf("/src holds %s, over its limit of %s ([docker] disk): write, edit, patch and upload are refused until files are removed", HumanSize(d.Used), HumanSize(d.Limit)))
	}
	if b.ConfigNote != "" && len(out) > 0 {
		out = append(out, b.ConfigNote)
	}
	return out
}

// pathNote says which path the host cannot store and how to get past it;
// a path that long is shown by its ends.
func pathNote(w snapshot.Withheld) string {
	return fmt.Sprintf("not committed: %s is a path of %d bytes, longer than the host can store (%d bytes here, %d a name); it stays in the sandbox. Delete or rename it in the sandbox (shorter names, fewer directories), or add it to .gitignore",
		agenttext.Shown(agenttext.Elide(w.Path, 120)), len(w.Path), w.Max, 255)
}

// HumanSize writes a byte count for people: "512 B", "50.0 MiB".
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
