package main

import (
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/mcp"
)

func (a *app) mcpCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "mcp",
		Aliases: []string{"stdio"},
		Short:   "Serve the agent tools over MCP on stdin/stdout",
		Long: `Serve Litterbox's agent tools over the Model Context Protocol on stdin and
stdout, for an MCP client (Claude Code, Codex, Cursor, ...) to launch.
Only the protocol is written to stdout; logs go to stderr.`,
		Example: `  litterbox mcp --repo /path/to/project
  claude mcp add litterbox -- litterbox mcp --repo "$PWD"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a.audit = true
			m, err := a.manager(cmd.Context())
			if err != nil {
				return err
			}
			return mcp.Serve(cmd.Context(), mcp.New(m, version, a.stderr), a.stdin, a.stdout, a.stderr)
		},
	}
}
