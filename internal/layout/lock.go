package layout

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
)

// Holder is what holds a sandbox's lock, as its holder wrote it in the
// lock file for those waiting: the call and since when.
type Holder struct {
	Call  string    `json:"call"`
	Since time.Time `json:"since"`
	PID   int       `json:"pid"`
	// MCP is set when an MCP server holds it, and Client is its client's
	// name, as the client told the server.
	MCP    bool   `json:"mcp,omitempty"`
	Client string `json:"client,omitempty"`
	// Ended is when the holder let go: the lock file keeps its last
	// holder, without its call, which list and watch show as the
	// sandbox's last activity and, while its process lives, its owner.
	Ended time.Time `json:"ended,omitzero"`
}

// Waiting is the line a waiter shows for h: the call (chosen by an agent,
// so made inert for a terminal and cut short) and how long it has run.
func (h Holder) Waiting(now time.Time) string {
	what := "another call"
	if h.Call != "" {
		what = agenttext.Inert(agenttext.Elide(agenttext.FirstLine(h.Call), 100))
	}
	if h.Since.IsZero() {
		return "waiting for " + what
	}
	return fmt.Sprintf("waiting for %s (running %s)", what, now.Sub(h.Since).Round(time.Second))
}

type callKey struct{}
type waitKey struct{}
type clientKey struct{}

// WithClient marks ctx's call as an MCP server's, for the MCP client
// named client (empty when it gave no name), which the lock holder
// records for those watching.
func WithClient(ctx context.Context, client string) context.Context {
	return context.WithValue(ctx, clientKey{}, client)
}

// ClientOf is the MCP client WithClient marked ctx with; mcp is false for
// a call that is no MCP server's.
func ClientOf(ctx context.Context) (client string, mcp bool) {
	client, mcp = ctx.Value(clientKey{}).(string)
	return client, mcp
}

// WithCall names the call that ctx's lock is taken for ("bash: make
// test"), which a waiter is shown.
func WithCall(ctx context.Context, call string) context.Context {
	return context.WithValue(ctx, callKey{}, call)
}

// OnWait has LockSandbox call f, once, when ctx's lock is not free within
// WaitNotice, with the holder's description (zero when it wrote none).
func OnWait(ctx context.Context, f func(Holder)) context.Context {
	return context.WithValue(ctx, waitKey{}, f)
}

// WaitNotice is how long a wait for a lock goes unmentioned: the usual
// wait, for another call's commit, is shorter.
const WaitNotice = 300 * time.Millisecond

// LockSandbox holds the lock file at path for sandbox slug until the
// returned function is called: flock, so it serializes across goroutines
// and processes (several `litterbox mcp` on one repository), and the
// kernel drops it if the process dies. It waits until ctx is done.
func LockSandbox(ctx context.Context, path, slug string) (func(), error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	notify, _ := ctx.Value(waitKey{}).(func(Holder))
	start := time.Now()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			call, _ := ctx.Value(callKey{}).(string)
			client, mcp := ClientOf(ctx)
			h := Holder{Call: call, Since: time.Now(), PID: os.Getpid(), MCP: mcp, Client: client}
			writeHolder(f, h)
			return func() {
				// The call's text goes: it may hold a secret's value that
				// was not known to mask when the call began.
				h.Call, h.Ended = "", time.Now()
				writeHolder(f, h)
				unlock(f)
			}, nil
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("locking sandbox '%s': %w", slug, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another call on sandbox '%s': %w", slug, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
		if notify != nil && time.Since(start) >= WaitNotice {
			notify(readHolder(f))
			notify = nil
		}
	}
}

// writeHolder records h in the held lock file, for waiters to read.
func writeHolder(f *os.File, h Holder) {
	data, _ := json.Marshal(h)
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(data, 0)
	}
}

// readHolder is what the lock file's holder wrote, zero if nothing.
func readHolder(f *os.File) Holder {
	var h Holder
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 4<<10))
	if err == nil {
		_ = json.Unmarshal(data, &h)
	}
	return h
}

// LockFile holds an exclusive lock on path until the returned function is
// called, waiting for it as long as it takes (for short, local work).
func LockFile(path string) (func(), error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return release(f), nil
}

// openLock opens the lock file at path, making it and its directory. Its
// holder's call may hold what an agent typed, secrets among it: only its
// owner reads it (a file an older release made is narrowed too).
func openLock(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// release empties the lock file and lets it go.
func release(f *os.File) func() {
	return func() {
		_ = f.Truncate(0)
		unlock(f)
	}
}

func unlock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// HoldSession marks a `litterbox run` session of a sandbox, at path, as
// running for as long as this process holds it: until end is called,
// or the process dies (the kernel drops the lock). When another process
// holds it, it returns that session's holder and no end.
func HoldSession(path string, h Holder) (end func(), other *Holder, err error) {
	f, err := openLock(path)
	if err != nil {
		return nil, nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if err != syscall.EWOULDBLOCK {
			return nil, nil, err
		}
		o := readHolder(f)
		return nil, &o, nil
	}
	writeHolder(f, h)
	return release(f), nil, nil
}

// Session is the running session (or call) held at path, nil when none is.
func Session(path string) *Holder {
	h, held := Last(path)
	if !held {
		return nil
	}
	return h
}

// Last is the holder of the lock at path, held says whether it holds it
// now; otherwise h is the last holder, with Ended set, or nil when none
// wrote itself there.
func Last(path string) (h *Holder, held bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // released on close anyway
	} else {
		held = true
	}
	last := readHolder(f)
	if last.PID == 0 && !held {
		return nil, false
	}
	return &last, held
}
