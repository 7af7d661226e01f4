package main

import (
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

func (a *app) resumeCommand() *cobra.Command {
	return a.bulkCommand("resume", "Resume a paused (or stopped) sandbox; idempotent",
		"  litterbox resume fix-login\n  litterbox resume --all-repos",
		func(m *sandbox.Manager) (one, all) { return m.Resume, m.ResumeAll })
}
