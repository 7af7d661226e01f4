package mcp

import (
	"context"
	"sync"
	"time"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/internal/agent"
)

// progressEvery is how often a long bash reports its latest output.
const progressEvery = time.Second

// progressTail is how much of the latest output a progress message carries.
const progressTail = 2 << 10

// progress sends notifications/progress with the latest output of a running
// command to a client that asked for them (a progressToken in the call's
// _meta), at most once per progressEvery. It returns nil when the client did
// not ask, and a stop function to call when the command is over.
func progress(ctx context.Context, req gomcp.CallToolRequest) (*agent.Output, func()) {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil, func() {}
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil, func() {}
	}
	p := &progressWriter{}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		n := 0
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			tail, fresh := p.take()
			if !fresh {
				continue
			}
			n++
			_ = srv.SendNotificationToClient(ctx, string(gomcp.MethodNotificationProgress), map[string]any{
				"progressToken": req.Params.Meta.ProgressToken,
				"progress":      n,
				"message":       tail,
			})
		}
	}()
	return &agent.Output{Stdout: p, Stderr: p}, func() { close(done); wg.Wait() }
}

// progressWriter keeps the tail of what a command printed.
type progressWriter struct {
	mu    sync.Mutex
	tail  []byte
	fresh bool
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tail = append(p.tail, b...)
	if len(p.tail) > progressTail {
		p.tail = append([]byte(nil), p.tail[len(p.tail)-progressTail:]...)
	}
	p.fresh = true
	return len(b), nil
}

func (p *progressWriter) take() (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fresh := p.fresh
	p.fresh = false
	return string(p.tail), fresh
}
