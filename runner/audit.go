package runner

import (
	"context"
	"errors"
	"sync"
	"time"
)

// AuditedCommand is one command as the audit log keeps it: the pasteable line
// (stdin is never kept), how it ended and how long it took.
type AuditedCommand struct {
	Line string `json:"command"`
	// Note names the command itself when Line is an equivalent (Cmd.Shown).
	Note       string `json:"note,omitempty"`
	ExitCode   int    `json:"exit_code"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// Trail collects the commands run on behalf of one operation (an MCP tool
// call); it travels in the context, so concurrent calls keep theirs apart.
type Trail struct {
	mu   sync.Mutex
	cmds []AuditedCommand
}

// Commands returns what ran so far.
func (t *Trail) Commands() []AuditedCommand {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]AuditedCommand{}, t.cmds...)
}

type trailKey struct{}

// WithTrail returns a context whose commands are recorded in t by an Audit
// runner.
func WithTrail(ctx context.Context, t *Trail) context.Context {
	return context.WithValue(ctx, trailKey{}, t)
}

// Audit wraps a Runner and adds every command run with a Trail in its
// context to that trail.
type Audit struct{ Inner Runner }

// Run runs c and records it.
func (a Audit) Run(ctx context.Context, c Cmd) (Result, error) {
	t, _ := ctx.Value(trailKey{}).(*Trail)
	if t == nil {
		return a.Inner.Run(ctx, c)
	}
	start := time.Now()
	res, err := a.Inner.Run(ctx, c)
	line, note := logLine(c, false)
	took := time.Since(start)
	if c.Carried != nil {
		took = c.Carried.Duration
	}
	rec := AuditedCommand{Line: line, Note: note, ExitCode: res.ExitCode, DurationMS: took.Milliseconds()}
	var ee *ExitError
	if errors.As(err, &ee) {
		rec.ExitCode = ee.Result.ExitCode
	} else if err != nil {
		rec.ExitCode = -1
		rec.Error = err.Error()
	}
	t.mu.Lock()
	t.cmds = append(t.cmds, rec)
	t.mu.Unlock()
	return res, err
}
