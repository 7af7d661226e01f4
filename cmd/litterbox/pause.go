package main

import (
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

func newPauseCommand(p *cli.Program) *cobra.Command {
	return newBulkCommand(p, "pause", "Freeze a sandbox's processes (docker pause); idempotent",
		"  litterbox pause fix-login\n  litterbox pause --all-envs",
		func(m *sandbox.Manager) (one, all) { return m.Pause, m.PauseAll })
}
