package main

import (
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

func (a *app) pauseCommand() *cobra.Command {
	return a.bulkCommand("pause", "Freeze a sandbox's processes (docker pause); idempotent",
		"  litterbox pause fix-login\n  litterbox pause --all-envs",
		func(m *sandbox.Manager) (one, all) { return m.Pause, m.PauseAll })
}
