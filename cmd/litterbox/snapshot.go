package main

import (
	"fmt"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

func (e *env) reportSnapshot(m *sandbox.Manager, name string, res *agent.ActResult) {
	if res == nil {
		return
	}
	if res.Snapshot != "" {
		slug, _ := hostrepo.ParseName(name)
		fmt.Fprintf(e.stderr, "litterbox: committed %s on %s\n", res.Snapshot[:12], m.Names(slug).Branch)
	}
	for _, n := range res.Notes() {
		fmt.Fprintf(e.stderr, "litterbox: %s\n", n)
	}
}
