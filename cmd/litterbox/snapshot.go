package main

import (
	"fmt"

	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

func (a *app) reportSnapshot(m *sandbox.Manager, name string, res *sandbox.ActResult) {
	if res == nil {
		return
	}
	if res.Snapshot != "" {
		slug, _ := sandbox.ParseName(name)
		fmt.Fprintf(a.stderr, "litterbox: committed %s on %s\n", res.Snapshot[:12], m.Names(slug).Branch)
	}
	for _, n := range res.Notes() {
		fmt.Fprintf(a.stderr, "litterbox: %s\n", n)
	}
}
