package reviewcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/steering"
)

// warnControl tells the user, before anything else, which files the
// sandbox's branch changes that steer sandboxes or programs on this machine
// once merged. A sandbox that cannot be read is left to the command itself
// to report.
func warnControl(e *cli.Env, ctx context.Context, m *sandbox.Manager, name string) {
	if cs, _, err := m.ControlChanges(ctx, name); err == nil {
		warnChanges(e, cs)
	}
}

func warnChanges(e *cli.Env, cs []steering.Change) {
	if len(cs) > 0 {
		fmt.Fprintf(e.Stderr, "Warning: this branch changes files that steer sandboxes or programs on this machine; review them: %s\n", joinChanges(cs))
	}
}

func joinChanges(cs []steering.Change) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}
