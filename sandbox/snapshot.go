package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/helper/protocol"
	"github.com/litterbox-dev/litterbox/snapshot"
)

// OutputCap is how much of each output stream of a command is kept.
const OutputCap = 256 << 10

func (m *Manager) snapDir(kind string) string { return filepath.Join(m.GitDir, "litterbox", kind) }

func (m *Manager) loadSnap(slug string) (snapshot.State, error) {
	var st snapshot.State
	data, err := os.ReadFile(filepath.Join(m.snapDir("snap"), slug+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

func (m *Manager) saveSnap(slug string, st snapshot.State) error {
	return writeFileAtomic(filepath.Join(m.snapDir("snap"), slug+".json"), mustJSON(st))
}

func (m *Manager) index(slug string) gitcli.Index {
	return gitcli.Index(filepath.Join(m.snapDir("index"), slug))
}

// mirror is the sandbox's rules work tree: its .gitignore and
// .gitattributes files, as they are in the container.
func (m *Manager) mirror(slug string) string { return filepath.Join(m.snapDir("ignore"), slug) }

func (m *Manager) snapStore(ctx context.Context, slug string) *snapshot.Store {
	n := m.Names(slug)
	return &snapshot.Store{
		Git: m.Git, GitDir: m.GitDir, Ref: n.Ref, Branch: n.Branch,
		Index: m.index(slug), Rules: m.mirror(slug), Tmp: filepath.Join(m.snapDir("tmp"), slug),
		Author: m.agentIdent(slug), Committer: func(ctx context.Context) gitcli.Ident { return m.committer(ctx, slug) },
	}
}

// action is one agent call that may change files.
type action struct {
	op      string // a protocol.Op*
	arg     string // workdir (run, setup) or path (write, rm, upload)
	cmd     string // run, setup
	timeout time.Duration
	content io.Reader // write, upload
	size    int64
	message string // snapshot subject and body
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
	// noShell: the image has no /bin/sh, so no command ran.
	noShell bool
	// dirsRead and fullScan say how the scan went (tests, benchmarks).
	dirsRead int
	fullScan bool
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
	h, err := m.helperFor(ctx, slug)
	if err != nil {
		return nil, err
	}
	req := &protocol.Request{
		Version: protocol.Version, Op: a.op, OldGen: st.Gen, NewGen: st.Gen + 1,
		Cap: OutputCap, Stream: a.output != nil, TimeoutMS: uint64(a.timeout / time.Millisecond),
		ContentLen: uint64(a.size), Prune: st.Skipped(),
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
		res, err := m.Provider.Exec(execCtx, m.Names(slug).Container, dockercli.ExecSpec{Interactive: true, OwnGroup: true, Cmd: h.argv("act")},
			dockercli.Streams{Stdin: inR, Stdout: outW, Stderr: &engineErr})
		if err == nil && res.ExitCode != 0 {
			err = fmt.Errorf("sandbox helper exited with code %d: %s", res.ExitCode, firstLine(engineErr.String()))
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
		var engine *dockercli.Error
		if execErr := <-execDone; errors.As(execErr, &engine) {
			return m.execError(ctx, slug, execErr)
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
	res, err := m.awaitResult(ctx, r, w, a.output)
	if err != nil {
		return fail(err)
	}
	store := m.snapStore(ctx, slug)
	taken, snapErr := store.Take(execCtx, snapshot.Conversation{R: r, W: w}, &st, a.message)
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
	st.Gen++
	if err := m.saveSnap(slug, st); err != nil {
		return res, err
	}
	return res, nil
}

// awaitResult reads the command's output until its result. If ctx ends
// first, the helper is told to kill the command; the result still comes.
func (m *Manager) awaitResult(ctx context.Context, r *protocol.Reader, w *protocol.Writer, out *Output) (*ActResult, error) {
	stop := make(chan struct{})
	var watch sync.WaitGroup
	watch.Add(1)
	go func() {
		defer watch.Done()
		select {
		case <-ctx.Done():
			_ = w.Frame(protocol.TCancel, nil)
		case <-stop:
		}
	}()
	defer watch.Wait()
	defer close(stop)
	var stdout, stderr strings.Builder
	var outCut, errCut int64 // beyond the cap, when streaming
	for {
		t, p, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("reading the sandbox's answer: %w", unexpected(err))
		}
		switch t {
		case protocol.TStdout, protocol.TStderr:
			keep, cut := &stdout, &outCut
			if t == protocol.TStderr {
				keep, cut = &stderr, &errCut
			}
			if dst := out.writer(t); dst != nil {
				_, _ = dst.Write(p)
			}
			n := min(len(p), max(OutputCap-keep.Len(), 0))
			keep.Write(p[:n])
			*cut += int64(len(p) - n)
		case protocol.TResult:
			pr, err := protocol.DecodeResult(p)
			if err != nil {
				return nil, err
			}
			if pr.Err != "" {
				stderr.WriteString(pr.Err)
			}
			return &ActResult{
				ExitCode: pr.ExitCode, TimedOut: pr.TimedOut, Cancelled: pr.Cancelled,
				Stdout: stdout.String(), Stderr: stderr.String(),
				StdoutCut: int64(pr.OutCut) + outCut, StderrCut: int64(pr.ErrCut) + errCut, noShell: pr.NoShell,
			}, nil
		case protocol.TFail:
			return nil, &protocol.FailError{Msg: string(p)}
		default:
			return nil, fmt.Errorf("unexpected frame %q from the sandbox helper", t)
		}
	}
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
	case errors.Is(err, dockercli.ErrNoSuchContainer):
		return m.missingOrNotFound(ctx, slug)
	case errors.Is(err, dockercli.ErrPaused):
		return notRunning(slug, "paused")
	case errors.Is(err, dockercli.ErrNotRunning):
		// Podman does not say which: ask.
		if in, ierr := m.Provider.Inspect(ctx, m.Names(slug).Container); ierr == nil {
			return notRunning(slug, in.State)
		}
		return notRunning(slug, "exited")
	}
	return err
}

// notRunning says a sandbox in state cannot take commands until resumed.
func notRunning(slug string, state dockercli.State) error {
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
func commitMessage(kind, detail string) string {
	subject := kind + ": " + firstLine(detail)
	full := strings.TrimSpace(detail)
	if len(subject) < 72 && !strings.Contains(full, "\n") {
		return subject + "\n"
	}
	if len(subject) >= 72 {
		cut := 67
		for cut > 0 && !utf8RuneStart(subject[cut]) {
			cut--
		}
		subject = subject[:cut] + "..."
	} else {
		subject += " ..."
	}
	return subject + "\n\n" + full + "\n"
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func mustJSON(v any) []byte {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(data, '\n')
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
