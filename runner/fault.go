package runner

import (
	"context"
	"strings"
	"sync"
)

// Fault wraps a Runner and makes the Nth command whose shell line contains Match
// fail (or hang until its context ends), for tests of rollback paths. It counts
// from 1; N of 0 never fires.
type Fault struct {
	Inner Runner
	Match string
	N     int
	// Hang makes the chosen command block until ctx is done instead of failing.
	Hang bool
	// Stderr is what the failed command says; "injected fault" by default.
	Stderr string

	mu    sync.Mutex
	seen  int
	fired bool
}

// Run runs c, or fails it if it is the chosen one.
func (f *Fault) Run(ctx context.Context, c Cmd) (Result, error) {
	if c.Carried == nil && f.choose(c) {
		if f.Hang {
			<-ctx.Done()
			return Result{ExitCode: -1}, &StartError{Cmd: c, Err: ctx.Err()}
		}
		msg := f.Stderr
		if msg == "" {
			msg = "injected fault"
		}
		res := Result{ExitCode: 125, Stderr: []byte(msg + "\n")}
		return res, &ExitError{Cmd: c, Result: res}
	}
	return f.Inner.Run(ctx, c)
}

func (f *Fault) choose(c Cmd) bool {
	if !strings.Contains(ShellLine(c), f.Match) {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seen++
	if f.seen == f.N {
		f.fired = true
		return true
	}
	return false
}

// Fired reports whether the fault was injected.
func (f *Fault) Fired() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

// Seen is how many matching commands went through.
func (f *Fault) Seen() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.seen
}
