package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/secrets"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
)

// Action is one agent call that may change files.
type Action struct {
	Op      string // a protocol.Op*
	Arg     string // workdir (run, setup) or path (write, rm, upload)
	Cmd     string // run, setup
	Env     map[string]string
	Timeout time.Duration
	Content io.Reader // write, upload
	Size    int64
	// Edits is an edit's content, encoded by act once the call's bounds
	// are known (it sets MaxOut).
	Edits   *protocol.Edits
	Message string // snapshot subject and body
	// Kind and Detail, when set, make the message instead, once the
	// secrets are known: a value is masked before the detail is cut, so
	// no piece of one survives the cut.
	Kind, Detail string
	// Counted: the message is Kind and the paths the commit holds, with
	// Detail in its body ("run: app.py (1 file)").
	Counted bool
	// Output, when set, gets the command's output as it comes, uncapped;
	// the result keeps the head and tail of each stream all the same.
	Output *Output
	// OutputLimit, when set, is how many bytes of each stream the result
	// keeps instead of the config's output-limit.
	OutputLimit int64
	// Swap, on a sync, moves the branch from one tip to another once the
	// helper has begun to apply the change between them, before the
	// call's scan: the scan then commits on the new tip whatever /src
	// holds otherwise.
	Swap *Swap
}

// Swap is the branch's move a sync makes: From, the tip /src was at, to
// To, the tip whose tree the call's content brings.
type Swap struct{ From, To string }

// Output receives a command's streams as they come.
type Output struct {
	Stdout, Stderr io.Writer
}

// overMaxFile refuses a write or edit whose file would be over
// max-file-size: it could not be committed.
func overMaxFile(size, max int64) error {
	return fmt.Errorf("content is %s, over max-file-size (%s): the file could not be committed; a person may raise [snapshot] max-file-size in %s (write takes at most %s), or make the file with bash and add it to .gitignore", result.HumanSize(size), config.FormatSize(max), config.LocalFile, result.HumanSize(MaxWriteSize))
}

// act runs one action in the sandbox and commits what it changed, holding the
// sandbox lock for the whole call.
func (m *Agent) act(ctx context.Context, slug string, a Action) (*result.Act, error) {
	// Others see the call's name (waiting for it): the secrets known so
	// far are masked in it.
	unlock, err := m.Repo.Lock(layout.WithCall(ctx, m.Repo.Secrets.Seen().Redact(a.callName())), slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res, err := m.ActLocked(ctx, slug, a)
	if idle := m.idleStopped(ctx, slug, err); idle != nil {
		return nil, idle
	}
	return res, err
}

// idleStopped is the IdleError of a sandbox that PID 1 ended for being
// idle, when err says a call found it stopped; nil otherwise.
func (m *Agent) idleStopped(ctx context.Context, slug string, err error) error {
	var nr *NotRunningError
	if !errors.As(err, &nr) || nr.State == "paused" {
		return nil
	}
	in, ierr := m.Repo.Box(slug).Inspect(ctx)
	if ierr != nil || in.State == "running" || in.ExitCode != protocol.IdleExit {
		return nil
	}
	return &IdleError{Slug: slug, State: in.State}
}

// callName is how a waiter is told of a: its kind and command, or its
// message's subject.
func (a Action) callName() string {
	if a.Kind != "" {
		return a.Kind + ": " + agenttext.FirstLine(agenttext.Cap(a.Detail, 200))
	}
	return agenttext.FirstLine(a.Message)
}

// maxShownInput bounds the content a logged write line carries.
const maxShownInput = 64 << 10

// shownAct is what the log shows for an agent call: the same effect
// without the helper's protocol, a line that pasted runs the command or
// writes the file (the snapshot is left out). Content too large, not text
// or holding a secret, an upload and a scan show the call itself; a
// secret in a command is masked.
func shownAct(h *helperbin.Binary, a Action, spec box.ExecSpec, sec *secrets.Values) *box.Shown {
	const note = "the snapshot left out"
	switch a.Op {
	case protocol.OpRun, protocol.OpSetup:
		return &box.Shown{Spec: box.ExecSpec{Workdir: a.Arg, Env: spec.Env, Secrets: spec.Secrets, Cmd: []string{"/bin/sh", "-c", sec.Redact(a.Cmd)}}, Note: note}
	case protocol.OpRemove:
		return &box.Shown{Spec: box.ExecSpec{Cmd: h.Argv(protocol.CmdRm{Path: a.Arg})}, Note: note}
	case protocol.OpWrite:
		r, ok := a.Content.(*bytes.Reader)
		if !ok || a.Size > maxShownInput {
			return nil
		}
		data := make([]byte, a.Size)
		if n, _ := r.ReadAt(data, 0); int64(n) != a.Size || !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 || sec.Holds(data) != "" {
			return nil
		}
		return &box.Shown{Spec: box.ExecSpec{Interactive: true, Cmd: h.Argv(protocol.CmdPut{Path: a.Arg})}, Input: data, HasInput: true, Note: note}
	}
	return nil
}

// commitMessage is the snapshot message of a committing paths, its
// secrets masked.
func (a Action) commitMessage(sec *secrets.Values, paths []string) string {
	if a.Counted {
		// A session commits many times with one command: the subject
		// says what changed, the body the command.
		full := agenttext.Cap(sec.Redact(a.Detail), agenttext.MaxMessage)
		return hostrepo.CommitMessage(a.Kind, whatChanged(paths)) + "\n" + agenttext.Inert(full) + "\n"
	}
	if a.Kind != "" {
		return hostrepo.CommitMessage(a.Kind, sec.Redact(a.Detail))
	}
	return sec.Redact(a.Message)
}

// whatChanged names the paths a commit changes for its subject: the
// first few, elided to fit, then how many in all ("app.py, tests/test_app.py
// (2 files)").
func whatChanged(paths []string) string {
	const width, most = 56, 3
	var shown []string
	used := 0
	for _, p := range paths[:min(len(paths), most)] {
		p = agenttext.Inert(agenttext.Elide(p, width))
		if len(shown) > 0 && used+len(p) > width {
			break
		}
		shown, used = append(shown, p), used+len(p)+2
	}
	return fmt.Sprintf("%s (%d %s)", strings.Join(shown, ", "), len(paths), plural(len(paths), "file"))
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

// ActLocked holds one conversation with the sandbox's helper: the request,
// the command's output as it comes, its result, then the snapshot. When ctx
// ends while the command runs, the helper is told to kill it, and the call
// still commits what the command changed: the exec itself runs on.
func (m *Agent) ActLocked(ctx context.Context, slug string, a Action) (*result.Act, error) {
	c, err := m.prepareCall(ctx, slug, a)
	if err != nil {
		return nil, err
	}
	a = c.a // an edit's content is made there
	if err := m.markSwap(c); err != nil {
		return nil, err
	}
	execCtx, cancelExec := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelExec()
	if dl, ok := ctx.Deadline(); ok {
		execCtx, cancelExec = context.WithDeadline(execCtx, dl.Add(snapshotGrace))
		defer cancelExec()
	}
	v := m.startAct(execCtx, cancelExec, c)
	if c.watchEnd {
		defer m.watchEnd(execCtx, slug, v.abort)()
	}
	w, r := v.w, v.r
	if err := w.Frame(protocol.TRequest, c.req.Encode()); err != nil {
		return nil, v.stop(ctx, err)
	}
	between, before, err := m.takeBetween(execCtx, c, v, snapshot.Conversation{R: r, W: w})
	if err != nil {
		return nil, v.stop(ctx, err)
	}
	if a.Content != nil {
		if err := w.Raw(a.Content, a.Size); err != nil {
			return nil, v.stop(ctx, fmt.Errorf("sending the content: %w", err))
		}
	}
	// A helper that does not answer in time (one the agent replaced, say)
	// must not hold the call, nor the sandbox's lock, for ever.
	res, err := m.awaitResult(ctx, r, w, a.Output, c.outputLimit(), c.sec, answerBound{timeout: a.Timeout, abort: v.abort})
	if err != nil {
		return nil, v.stop(ctx, err)
	}
	v.exit = res.ExitCode
	if err := m.swap(execCtx, c, res); err != nil {
		return nil, v.stop(ctx, err)
	}
	store := m.Repo.SnapStore(slug, c.lim)
	store.Secrets = c.sec
	taken, snapErr := store.TakeCounted(execCtx, snapshot.Conversation{R: r, W: w}, &c.st, func(paths []string) string { return a.commitMessage(c.sec, paths) })
	if snapErr != nil {
		// The index may hold changes no commit has: rebuild it next time.
		store.Forget(&c.st)
		if cause := v.stop(ctx, snapErr); cause != snapErr {
			return res, cause
		}
		return res, fmt.Errorf("the command ran, but its changes could not be committed (they are kept and retried on the next call): %w", snapErr)
	}
	if err := v.end(ctx); err != nil {
		return res, err
	}
	res.Between = between
	err = m.settle(c, res, taken)
	addBefore(res, before)
	return res, err
}

// markSwap saves, before a sync's call starts, a snapshot state that reads
// the branch afresh and scans all of /src: should the call stop half-way
// (a kill, a lost engine), the next call's snapshot makes the branch
// equal /src, wherever either stopped. The call's own state is not
// marked; its settle saves it whole.
func (m *Agent) markSwap(c *call) error {
	if c.a.Swap == nil {
		return nil
	}
	marked := c.st
	marked.Tip, marked.TipTree, marked.Rescan = "", "", true
	return m.Repo.SaveSnap(c.slug, marked)
}

// swap moves the branch as a sync's Swap says, unless the helper applied
// nothing (protocol.SyncSkipped), and makes the call's scan compare with
// the new tip.
func (m *Agent) swap(ctx context.Context, c *call, res *result.Act) error {
	sw := c.a.Swap
	if sw == nil || res.OpErr == protocol.SyncSkipped {
		return nil
	}
	tree, err := m.Repo.Git.RevParse(ctx, sw.To+"^{tree}")
	if err != nil {
		return err
	}
	n := m.Repo.Names(c.slug)
	if err := m.Repo.Git.UpdateRef(ctx, n.Ref, sw.To, sw.From, "litterbox sync"); err != nil {
		return fmt.Errorf("moving %s for the sync: %w", n.Branch, err)
	}
	c.st.Tip, c.st.TipTree = sw.To, tree
	return nil
}

// addBefore counts in the scan that committed what changed between calls:
// what it withheld, and how it read.
func addBefore(r *result.Act, t *snapshot.Taken) {
	if t == nil {
		return
	}
	r.Withheld = append(t.Withheld, r.Withheld...)
	r.WithheldMore += t.WithheldMore
	r.DirsRead += t.DirsRead
	r.FullScan = r.FullScan || t.Full
}

// takeBetween reads the helper's Begin and, when files changed since the
// last call (a background command, a person's docker exec, a call cut
// short), commits them as their own snapshot, "between calls: N paths",
// before the call's action runs.
func (m *Agent) takeBetween(ctx context.Context, c *call, v *actExec, conv snapshot.Conversation) (result.Between, *snapshot.Taken, error) {
	p, err := awaitBegin(c, v, conv)
	if err != nil {
		return result.Between{}, nil, fmt.Errorf("reading the sandbox's answer: %w", hostrepo.Unexpected(err))
	}
	v.markBegun()
	b, err := protocol.DecodeBegin(p)
	if err != nil || !b.Between {
		return result.Between{}, nil, err
	}
	store := m.Repo.SnapStore(c.slug, c.lim)
	store.Secrets = c.sec
	var n int
	taken, err := store.TakeCounted(ctx, conv, &c.st, func(paths []string) string {
		n = len(paths)
		return hostrepo.CommitMessage(BetweenKind, fmt.Sprintf("%d %s", n, plural(n, "path")))
	})
	if err != nil {
		store.Forget(&c.st)
		return result.Between{}, nil, fmt.Errorf("committing what changed since the last call (nothing of this call ran): %w", err)
	}
	c.st.Gen++
	if err := m.Repo.SaveSnap(c.slug, c.st); err != nil {
		return result.Between{}, nil, err
	}
	if taken.Commit == "" {
		n = 0
	}
	return result.Between{Commit: taken.Commit, Paths: n}, taken, nil
}

// awaitBegin reads the helper's Begin. It comes before the command runs,
// so the caller's cancel waits for it (then the helper is told to kill the
// command); only a helper that does not answer within the command's own
// bound is cut off, as awaitResult does, for the exec's start under load
// counts. The scan of what changed between calls, which follows, is
// bounded as the call's own scan is, by ctx: the timer is stopped first.
func awaitBegin(c *call, v *actExec, conv snapshot.Conversation) ([]byte, error) {
	if c.a.Timeout > 0 {
		bound := c.a.Timeout + resultSlack
		late := time.AfterFunc(bound, func() { v.abort(fmt.Errorf("the sandbox did not answer within %v", bound)) })
		defer late.Stop()
	}
	return conv.R.Expect(protocol.TBegin)
}

// BetweenKind names the snapshots of changes made between calls.
const BetweenKind = "between calls"

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// call is one agent action made ready: the sandbox's snapshot state, its
// helper, the bounds and secrets of this call, and the request to send.
type call struct {
	slug    string
	a       Action
	st      snapshot.State
	h       *helperbin.Binary
	lim     layout.Limits
	limNote string
	sec     *secrets.Values
	req     *protocol.Request
	// watchEnd: the sandbox runs under gVisor, where an exec does not
	// end with the sandbox (watchesEnd).
	watchEnd bool
}

// outputLimit is how many bytes of each output stream the call's result
// keeps: the call's own limit, else the config's.
func (c *call) outputLimit() int64 {
	if c.a.OutputLimit > 0 {
		return c.a.OutputLimit
	}
	return c.lim.Output
}

// prepareCall reads what the call needs and refuses, before anything runs,
// a write the disk guard or max-file-size would not let through.
func (m *Agent) prepareCall(ctx context.Context, slug string, a Action) (*call, error) {
	st, err := m.Repo.LoadSnap(slug)
	if err != nil {
		return nil, err
	}
	h, rec, err := m.helperFor(ctx, slug)
	if err != nil {
		return nil, err
	}
	c := &call{slug: slug, a: a, st: st, h: h, watchEnd: watchesEnd(rec)}
	var specs map[string]config.SecretSpec
	c.lim, specs, c.limNote = m.Repo.CallConfig(ctx, rec)
	if c.sec, err = m.Repo.Secrets.Resolve(ctx, specs); err != nil {
		return nil, fmt.Errorf("%w (the call did not run)", err)
	}
	c.sec = c.sec.InSandbox(specs, hostrepo.Placeholders(rec))
	over := diskOver(&c.st, c.lim)
	if over != nil && (a.Op == protocol.OpWrite || a.Op == protocol.OpUpload || a.Op == protocol.OpEdit) {
		return nil, &DiskFullError{Name: slug, DiskOver: *over}
	}
	if a.Op == protocol.OpWrite && a.Size > c.lim.MaxFileSize {
		return nil, overMaxFile(a.Size, c.lim.MaxFileSize)
	}
	if a.Edits != nil {
		// The edited file is refused where a write of it would be.
		a.Edits.MaxOut = uint64(c.lim.MaxFileSize)
		content := a.Edits.Encode()
		a.Content, a.Size = bytes.NewReader(content), int64(len(content))
		c.a = a
	}
	c.req = &protocol.Request{
		Version: protocol.Version, Op: a.Op, OldGen: st.Gen, NewGen: st.Gen + 1,
		Cap: uint64(c.outputLimit()), Stream: a.Output != nil, TimeoutMS: timeoutMS(a.Timeout),
		ContentLen: uint64(a.Size), Prune: st.Skipped(), MaxFile: uint64(c.lim.MaxFileSize), Measure: over != nil && st.PID1Sizes,
		Rescan: st.Rescan,
	}
	switch a.Op {
	case protocol.OpRun, protocol.OpSetup:
		c.req.Dir, c.req.Cmd = a.Arg, a.Cmd
	default:
		c.req.Path = a.Arg
	}
	return c, nil
}

// settle records what the call's snapshot took and saves the sandbox's
// snapshot state under its next generation.
func (m *Agent) settle(c *call, res *result.Act, taken *snapshot.Taken) error {
	res.Snapshot, res.DirsRead, res.FullScan = taken.Commit, taken.DirsRead, taken.Full
	res.Withheld, res.WithheldMore, res.DiskOver = taken.Withheld, taken.WithheldMore, diskOver(&c.st, c.lim)
	res.MaxCall, res.Unfiltered = c.lim.MaxCallSize, taken.Unfiltered
	if len(res.Withheld) > 0 || res.DiskOver != nil {
		res.ConfigNote = c.limNote
	}
	c.st.Gen++
	return m.Repo.SaveSnap(c.slug, c.st)
}
