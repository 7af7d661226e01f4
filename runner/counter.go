package runner

import (
	"context"
	"sync"
)

// Counter wraps a Runner and keeps every command's argv, so tests can count the
// docker calls an operation makes.
type Counter struct {
	Inner Runner

	mu   sync.Mutex
	cmds [][]string
}

// Run runs c with the inner runner and remembers it.
func (c *Counter) Run(ctx context.Context, cmd Cmd) (Result, error) {
	if cmd.Carried != nil {
		return c.Inner.Run(ctx, cmd) // no process of its own
	}
	c.mu.Lock()
	c.cmds = append(c.cmds, cmd.Argv())
	c.mu.Unlock()
	return c.Inner.Run(ctx, cmd)
}

// Count returns how many commands ran whose program is name, and resets nothing.
func (c *Counter) Count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, a := range c.cmds {
		if a[0] == name {
			n++
		}
	}
	return n
}

// Reset forgets what ran so far.
func (c *Counter) Reset() {
	c.mu.Lock()
	c.cmds = nil
	c.mu.Unlock()
}

// Commands returns a copy of the argvs run so far.
func (c *Counter) Commands() [][]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([][]string, len(c.cmds))
	copy(out, c.cmds)
	return out
}
