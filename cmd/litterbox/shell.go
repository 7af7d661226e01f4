package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
)

// shellOptions are what shell was asked.
type shellOptions struct{ Name string }

func newShellCommand(p *program) *cobra.Command {
	return &cobra.Command{
		Use:   "shell NAME",
		Short: "Open an interactive shell in a sandbox, as the sandbox user, in /src",
		Long: `Open an interactive shell in a sandbox, as the sandbox user, in /src. When the
shell exits (or litterbox is interrupted or terminated), every process it
started is stopped and whatever it changed that git would track is committed
to the sandbox's branch ("shell: interactive session").`,
		Example:           "  litterbox shell fix-login",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: p.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShell(cmd.Context(), p.env, shellOptions{Name: args[0]})
		},
	}
}

// runShell opens sh in the sandbox on e's streams (a terminal when both
// ends are one), then commits what the session changed.
func runShell(ctx context.Context, e *env, o shellOptions) error {
	m, err := e.manager(ctx)
	if err != nil {
		return err
	}
	tty := isTerminal(e.stdin) && isTerminal(e.stdout)
	code, err := m.Agent.Exec(ctx, o.Name, agent.ExecOptions{
		Cmd: []string{"sh"}, Interactive: true, TTY: tty,
		Streams: box.Streams{Stdin: e.stdin, Stdout: e.stdout, Stderr: e.stderr},
	})
	if err != nil {
		return err
	}
	// Interrupted or not, what the session changed is committed.
	res, err := m.Agent.Scan(e.sayWaiting(context.WithoutCancel(ctx)), o.Name, "shell", "interactive session")
	if err != nil {
		return err
	}
	e.reportSnapshot(m, o.Name, res)
	if code != 0 {
		return exitCode(code)
	}
	return nil
}
