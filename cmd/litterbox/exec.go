package main

import (
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/sandbox"
)

func (a *app) shellCommand() *cobra.Command {
	return &cobra.Command{
		Use:               "shell NAME",
		Short:             "Open an interactive shell in a sandbox, as the sandbox user, in /src",
		Example:           "  litterbox shell fix-login",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.exec(cmd, args[0], []string{"sh"}, true)
		},
	}
}

func (a *app) execCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "exec NAME -- CMD [ARG...]",
		Short: "Run a command in a sandbox and exit with its status",
		Example: `  litterbox exec fix-login -- ls -la
  litterbox exec fix-login -- sh -c 'make test'`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return usagef("exec: put -- between the sandbox name and the command (litterbox exec NAME -- CMD...)")
			}
			return a.exec(cmd, args[0], args[1:], false)
		},
	}
}

func (a *app) exec(cmd *cobra.Command, name string, argv []string, interactive bool) error {
	m, err := a.manager(cmd.Context())
	if err != nil {
		return err
	}
	tty := isTerminal(a.stdin) && isTerminal(a.stdout)
	code, err := m.Exec(cmd.Context(), name, sandbox.ExecOptions{
		Cmd:         argv,
		Interactive: interactive || !isTerminal(a.stdin) || tty,
		TTY:         tty,
		Streams:     dockercli.Streams{Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr},
	})
	if err != nil {
		return err
	}
	if code != 0 {
		return exitCode(code)
	}
	return nil
}
