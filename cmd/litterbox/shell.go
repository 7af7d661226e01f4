package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
)

// shellOptions are what shell was asked.
type shellOptions struct{ Name string }

func newShellCommand(p *cli.Program) *cobra.Command {
	return &cobra.Command{
		Use:   "shell NAME",
		Short: "Open an interactive shell in a sandbox, as the sandbox user, in /src",
		Long: `Open an interactive shell in a sandbox, as the sandbox user, in /src. When the
shell exits (or litterbox is interrupted or terminated), every process it
started is stopped and whatever it changed that git would track is committed
to the sandbox's branch ("shell: interactive session").`,
		Example:           "  litterbox shell fix-login",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShell(cmd.Context(), p.Env, shellOptions{Name: args[0]})
		},
	}
}

// runShell opens sh in the sandbox on e's streams (a terminal when both
// ends are one), then commits what the session changed.
func runShell(ctx context.Context, e *cli.Env, o shellOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	sb, err := m.Open(o.Name)
	if err != nil {
		return err
	}
	tty := cli.IsTerminal(e.Stdin) && cli.IsTerminal(e.Stdout)
	code, err := sb.Exec(ctx, agent.ExecOptions{
		Cmd: []string{"sh"}, Interactive: true, TTY: tty,
		Streams: box.Streams{Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr},
	})
	if err != nil {
		return err
	}
	// Interrupted or not, what the session changed is committed.
	res, err := sb.Scan(sayWaiting(e, context.WithoutCancel(ctx)), "shell", "interactive session")
	if err != nil {
		return err
	}
	reportSnapshot(e, m, o.Name, res)
	if code != 0 {
		return cli.ExitCode(code)
	}
	return nil
}
