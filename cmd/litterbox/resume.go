package main

import (
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

func newResumeCommand(p *cli.Program) *cobra.Command {
	return newBulkCommand(p, "resume", "Resume a paused (or stopped) sandbox; idempotent",
		"  litterbox resume fix-login\n  litterbox resume --all-repos",
		func(m *sandbox.Manager) (one, all) { return m.Resume, m.ResumeAll })
}
