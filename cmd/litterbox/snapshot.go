package main

import (
	"context"
	"fmt"
	"time"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/result"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

func reportSnapshot(e *cli.Env, m *sandbox.Manager, name string, res *result.Act) {
	if res == nil {
		return
	}
	slug, _ := hostrepo.ParseName(name)
	if c := res.Between.Commit; c != "" {
		fmt.Fprintf(e.Stderr, "litterbox: committed %s on %s first: %d path(s) changed since the last call\n", c[:12], m.Repo.Names(slug).Branch, res.Between.Paths)
	}
	if res.Snapshot != "" {
		fmt.Fprintf(e.Stderr, "litterbox: committed %s on %s\n", res.Snapshot[:12], m.Repo.Names(slug).Branch)
	}
	for _, n := range res.Notes() {
		fmt.Fprintf(e.Stderr, "litterbox: %s\n", n)
	}
}

// sayWaiting has a call on ctx say, on stderr, what it waits for when the
// sandbox is busy with another call for more than a moment: a person
// running exec or shell would otherwise see nothing happen.
func sayWaiting(e *cli.Env, ctx context.Context) context.Context {
	return layout.OnWait(ctx, func(h layout.Holder) {
		fmt.Fprintf(e.Stderr, "litterbox: %s\n", h.Waiting(time.Now()))
	})
}
