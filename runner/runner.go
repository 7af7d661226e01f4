// Package runner is the only place Litterbox executes programs. Every docker and
// git invocation is an argument vector (never a host shell string) run here, so it
// can be logged as a pasteable line, recorded, replayed and fault-injected.
package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
)

// Cmd describes one program invocation.
type Cmd struct {
	Name string
	Args []string
	// Dir is the working directory; empty means the caller's.
	Dir string
	// Env holds extra KEY=VALUE pairs added to the inherited environment.
	Env []string
	// Secrets are KEY=VALUE pairs added like Env but never shown: not in
	// the logged line, the audit log or a transcript. The argv names them
	// instead (docker exec -e KEY takes the value from this environment).
	Secrets []string
	// Stdin, when set, is streamed to the process.
	Stdin io.Reader
	// Stdout and Stderr, when set, receive the output as it is produced and the
	// corresponding Result field stays empty; this keeps large tar streams out of
	// memory.
	Stdout io.Writer
	Stderr io.Writer
	// OwnGroup starts the process in a process group of its own, so a
	// Ctrl-C at the terminal reaches only Litterbox, which then ends the
	// command its own way (the sandbox helper's cancel) instead of losing
	// the stream half-way.
	OwnGroup bool
	// Shown, when set, is the equivalent line the log and audit trail
	// show instead of this command's own (see Shown).
	Shown *Shown
	// StdinKey, when set, is what a transcript matches this command's
	// stdin by: what matters of it (a protocol's messages), so an edit that
	// changes no behaviour keeps recorded transcripts valid. Without it
	// stdin is matched by its SHA-256.
	StdinKey func(stdin []byte) string
	// Carried, when set, says the command's effect was had already, over
	// a stream another command keeps open (a call over a sandbox's kept
	// channel), with this outcome: it is logged and audited as if it had
	// run, and nothing starts. Recorders and fault injectors pass it by.
	Carried *Result
	// Detach starts the program in a session of its own, its streams on
	// /dev/null, and returns at once: work that outlives the call (a warm
	// pool's refill) without a daemon. Its exit is never waited for by the
	// caller; Result is empty.
	Detach bool
}

// Argv is the full argument vector, program first.
func (c Cmd) Argv() []string { return append([]string{c.Name}, c.Args...) }

// String renders the command as a line that reproduces it in a POSIX shell.
func (c Cmd) String() string { return ShellLine(c) }

// Result is what a finished command produced.
type Result struct {
	Stdout   []byte
	Stderr   []byte
	ExitCode int
	Duration time.Duration
}

// Runner runs commands. Implementations must be safe for concurrent use.
type Runner interface {
	Run(ctx context.Context, c Cmd) (Result, error)
}

// ExitError reports a command that ran and exited non-zero. It carries the
// command and its captured stderr so callers can classify failures in one place.
type ExitError struct {
	Cmd    Cmd
	Result Result
}

func (e *ExitError) Error() string {
	msg := strings.TrimSpace(string(e.Result.Stderr))
	if msg == "" {
		msg = strings.TrimSpace(string(e.Result.Stdout))
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if msg == "" {
		return fmt.Sprintf("`%s` exited with code %d", Verb(e.Cmd), e.Result.ExitCode)
	}
	return fmt.Sprintf("`%s` exited with code %d: %s", Verb(e.Cmd), e.Result.ExitCode, msg)
}

// Verb names a command by its program and subcommand ("docker run", "git
// update-ref") for messages; the full line is in the debug log.
func Verb(c Cmd) string {
	words := []string{c.Name}
	args := c.Args
	for len(args) > 0 && len(words) < 3 {
		a := args[0]
		args = args[1:]
		// Global options with a value: git -C/-c, docker --context/--host.
		if a == "-C" || a == "-c" || a == "--context" || a == "--host" || a == "-H" {
			if len(args) > 0 {
				args = args[1:]
			}
			continue
		}
		if strings.HasPrefix(a, "--context=") || strings.HasPrefix(a, "--host=") {
			continue
		}
		if strings.HasPrefix(a, "-") {
			break
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

// Stderr returns the captured standard error of the failed command.
func (e *ExitError) Stderr() string { return string(e.Result.Stderr) }

// StartError reports a command that could not be started at all (binary missing,
// context already done).
type StartError struct {
	Cmd Cmd
	Err error
}

func (e *StartError) Error() string {
	return fmt.Sprintf("cannot run `%s`: %v", Verb(e.Cmd), e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// AsExit returns the ExitError inside err, if any.
func AsExit(err error) (*ExitError, bool) {
	var ee *ExitError
	ok := errors.As(err, &ee)
	return ee, ok
}

// Exec runs commands on the host with os/exec and logs each one.
type Exec struct {
	Log *logrus.Logger
	// KillGrace is how long a cancelled process gets between SIGTERM and SIGKILL.
	KillGrace time.Duration
}

// NewExec returns a Runner that executes for real and logs to log.
func NewExec(log *logrus.Logger) *Exec {
	return &Exec{Log: log, KillGrace: 2 * time.Second}
}

// Run executes c. A non-zero exit is an *ExitError; Result is filled either way.
func (e *Exec) Run(ctx context.Context, c Cmd) (Result, error) {
	if c.Carried != nil {
		e.log(c, *c.Carried, nil)
		return *c.Carried, nil
	}
	if c.Detach {
		return e.detach(c)
	}
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 || len(c.Secrets) > 0 {
		cmd.Env = append(append(os.Environ(), c.Env...), c.Secrets...)
	}
	// SIGTERM first so docker/git clients can tell the engine to stop what they
	// started; the WaitDelay bounds how long we wait before SIGKILL.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = e.KillGrace
	if c.OwnGroup {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	// A non-file stdin is copied by our own goroutine: os/exec would wait for
	// its copier, which blocks on our Reader when the process exits without
	// reading it all (docker exec refused at once), hanging Run for good.
	var stdinPipe io.WriteCloser
	if f, ok := c.Stdin.(*os.File); ok || c.Stdin == nil {
		if ok {
			cmd.Stdin = f
		}
	} else {
		var err error
		if stdinPipe, err = cmd.StdinPipe(); err != nil {
			return Result{ExitCode: -1}, &StartError{Cmd: c, Err: err}
		}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	var pumps []*pump
	if c.Stdout != nil {
		cmd.Stdout = c.Stdout
	}
	if c.Stderr != nil {
		// Keep a copy of the start of stderr for the error message even when
		// the caller streams it.
		cmd.Stderr = io.MultiWriter(c.Stderr, &headBuffer{buf: &stderr, max: 64 << 10})
	}
	for _, out := range []*io.Writer{&cmd.Stdout, &cmd.Stderr} {
		if _, isFile := (*out).(*os.File); isFile {
			continue // the process writes to it itself
		}
		p, w, err := startPump(*out)
		if err != nil {
			closePumps(pumps)
			return Result{ExitCode: -1}, &StartError{Cmd: c, Err: err}
		}
		pumps = append(pumps, p)
		*out = w
	}
	start := time.Now()
	err := cmd.Start()
	for _, p := range pumps {
		p.w.Close() // the process has its own copy now
	}
	if err == nil {
		if stdinPipe != nil {
			go func() {
				_, _ = io.Copy(stdinPipe, c.Stdin)
				stdinPipe.Close()
			}()
		}
		err = cmd.Wait()
	}
	for _, p := range pumps {
		if perr := p.finish(e.KillGrace); err == nil && perr != nil {
			err = perr
		}
	}
	res := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Duration: time.Since(start)}
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		if ctx.Err() != nil {
			err = &StartError{Cmd: c, Err: ctx.Err()}
		} else {
			err = &ExitError{Cmd: c, Result: res}
		}
	default:
		if ctx.Err() != nil {
			err = &StartError{Cmd: c, Err: ctx.Err()}
		} else {
			err = &StartError{Cmd: c, Err: err}
		}
		if res.ExitCode == 0 {
			res.ExitCode = -1
		}
	}
	e.log(c, res, err)
	return res, err
}

// detach starts c apart from this process: not bound to a context, since
// it is meant to outlive the call, and reaped in the background, so a
// long-lived process (an MCP server) keeps no zombie.
func (e *Exec) detach(c Cmd) (Result, error) {
	cmd := exec.Command(c.Name, c.Args...)
	cmd.Dir = c.Dir
	if len(c.Env) > 0 || len(c.Secrets) > 0 {
		cmd.Env = append(append(os.Environ(), c.Env...), c.Secrets...)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var err error
	if err = cmd.Start(); err != nil {
		err = &StartError{Cmd: c, Err: err}
	} else {
		go func() { _ = cmd.Wait() }()
	}
	e.log(c, Result{}, err)
	return Result{}, err
}

func (e *Exec) log(c Cmd, res Result, err error) {
	if e.Log == nil || !e.Log.IsLevelEnabled(logrus.DebugLevel) {
		return
	}
	line, note := logLine(c, true)
	fields := logrus.Fields{fieldExit: res.ExitCode, fieldTook: res.Duration}
	if note != "" {
		fields[fieldNote] = note
	}
	if _, ok := err.(*StartError); ok {
		fields[fieldError] = err.Error()
	}
	e.Log.WithFields(fields).Debug(line)
}

// headBuffer keeps the first max bytes written to it, enough to explain a
// failure, and drops the rest.
type headBuffer struct {
	buf *bytes.Buffer
	max int
}

func (t *headBuffer) Write(p []byte) (int, error) {
	if room := t.max - t.buf.Len(); room > 0 {
		if len(p) <= room {
			t.buf.Write(p)
		} else {
			t.buf.Write(p[:room])
		}
	}
	return len(p), nil
}

// ErrNotFound is wrapped by a StartError when the program is not on PATH.
var ErrNotFound = exec.ErrNotFound

// NamedReader is stdin whose content is known by a name rather than its
// bytes (a binary that differs from build to build): transcripts record and
// match the name.
type NamedReader struct {
	io.Reader
	Name string
}
