package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/runner"
)

// execOptions are what exec was asked.
type execOptions struct {
	Name    string
	Cmd     []string
	Timeout time.Duration
	Workdir string
}

func newExecCommand(p *cli.Program) *cobra.Command {
	var o execOptions
	cmd := &cobra.Command{
		Use:   "exec NAME -- CMD [ARG...]",
		Short: "Run a command in a sandbox, commit what it changed, and exit with its status",
		Long: `Run a command in a sandbox as the sandbox user (in /src unless --workdir), the
same way the agent's bash tool does: its output is printed as it comes,
processes it leaves running are stopped, and what it changed that git would
track is committed to the sandbox's branch. Ctrl-C (or SIGTERM) kills the
command with every process it started, commits what it changed, and exits
with status 130.`,
		Example: `  litterbox exec fix-login -- ls -la
  litterbox exec fix-login --timeout 10m -- sh -c 'make test'`,
		Args:              cobra.MinimumNArgs(2),
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return cli.Usagef("exec: put -- between the sandbox name and the command (litterbox exec NAME -- CMD...)")
			}
			o.Name, o.Cmd = args[0], args[1:]
			return runExec(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "kill the command after this long (e.g. 30s, 10m); default no limit")
	cmd.Flags().StringVarP(&o.Workdir, "workdir", "w", "", "directory to run in (default /src)")
	return cmd
}

// runExec runs o.Cmd through the agent's bash path, output streamed, and
// returns its exit status (124 timed out, 130 interrupted).
func runExec(ctx context.Context, e *cli.Env, o execOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 365 * 24 * time.Hour
	}
	sb, err := m.Open(o.Name)
	if err != nil {
		return err
	}
	line := runner.Join(o.Cmd)
	res, err := sb.Bash(sayWaiting(e, ctx), agent.BashOptions{Command: line, Workdir: o.Workdir, Timeout: timeout, Kind: "exec",
		Output: &agent.Output{Stdout: e.Stdout, Stderr: e.Stderr}})
	if res != nil {
		if res.TimedOut {
			fmt.Fprintf(e.Stderr, "litterbox: timed out after %s; every process the command started was killed\n", timeout)
		}
		if res.Cancelled {
			fmt.Fprintln(e.Stderr, "litterbox: interrupted; every process the command started was killed")
		}
	}
	if err != nil {
		return err
	}
	reportSnapshot(e, m, o.Name, res)
	if res.Cancelled {
		return cli.ExitCode(130)
	}
	if res.TimedOut {
		return cli.ExitCode(124)
	}
	if res.ExitCode != 0 {
		return cli.ExitCode(res.ExitCode)
	}
	return nil
}
