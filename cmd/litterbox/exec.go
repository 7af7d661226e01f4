package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// shellOptions are what shell was asked.
type shellOptions struct{ Name string }

func (a *app) shellCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "shell NAME",
		Short: "Open an interactive shell in a sandbox, as the sandbox user, in /src",
		Long: `Open an interactive shell in a sandbox, as the sandbox user, in /src. When the
shell exits (or litterbox is interrupted or terminated), every process it
started is stopped and whatever it changed that git would track is committed
to the sandbox's branch ("shell: interactive session").`,
		Example:           "  litterbox shell fix-login",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runShell(cmd.Context(), shellOptions{Name: args[0]})
		},
	}
}

// runShell opens sh in the sandbox on a's streams (a terminal when both
// ends are one), then commits what the session changed.
func (a *app) runShell(ctx context.Context, o shellOptions) error {
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	tty := isTerminal(a.stdin) && isTerminal(a.stdout)
	code, err := m.Exec(ctx, o.Name, sandbox.ExecOptions{
		Cmd: []string{"sh"}, Interactive: true, TTY: tty,
		Streams: box.Streams{Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr},
	})
	if err != nil {
		return err
	}
	// Interrupted or not, what the session changed is committed.
	res, err := m.Scan(context.WithoutCancel(ctx), o.Name, "shell", "interactive session")
	if err != nil {
		return err
	}
	a.reportSnapshot(m, o.Name, res)
	if code != 0 {
		return exitCode(code)
	}
	return nil
}

// execOptions are what exec was asked.
type execOptions struct {
	Name    string
	Cmd     []string
	Timeout time.Duration
	Workdir string
}

func (a *app) execCommand() *cobra.Command {
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
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return usagef("exec: put -- between the sandbox name and the command (litterbox exec NAME -- CMD...)")
			}
			o.Name, o.Cmd = args[0], args[1:]
			return a.runExec(cmd.Context(), o)
		},
	}
	cmd.Flags().DurationVar(&o.Timeout, "timeout", 0, "kill the command after this long (e.g. 30s, 10m); default no limit")
	cmd.Flags().StringVarP(&o.Workdir, "workdir", "w", "", "directory to run in (default /src)")
	return cmd
}

// runExec runs o.Cmd through the agent's bash path, output streamed, and
// returns its exit status (124 timed out, 130 interrupted).
func (a *app) runExec(ctx context.Context, o execOptions) error {
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 365 * 24 * time.Hour
	}
	line := runner.Join(o.Cmd)
	res, err := m.Bash(ctx, o.Name, sandbox.BashOptions{Command: line, Workdir: o.Workdir, Timeout: timeout, Kind: "exec",
		Output: &sandbox.Output{Stdout: a.stdout, Stderr: a.stderr}})
	if res != nil {
		if res.TimedOut {
			fmt.Fprintf(a.stderr, "litterbox: timed out after %s; every process the command started was killed\n", timeout)
		}
		if res.Cancelled {
			fmt.Fprintln(a.stderr, "litterbox: interrupted; every process the command started was killed")
		}
	}
	if err != nil {
		return err
	}
	a.reportSnapshot(m, o.Name, res)
	if res.Cancelled {
		return exitCode(130)
	}
	if res.TimedOut {
		return exitCode(124)
	}
	if res.ExitCode != 0 {
		return exitCode(res.ExitCode)
	}
	return nil
}

func (a *app) reportSnapshot(m *sandbox.Manager, name string, res *sandbox.ActResult) {
	if res == nil {
		return
	}
	if res.Snapshot != "" {
		slug, _ := sandbox.ParseName(name)
		fmt.Fprintf(a.stderr, "litterbox: committed %s on %s\n", res.Snapshot[:12], m.Names(slug).Branch)
	}
	for _, n := range res.Notes() {
		fmt.Fprintf(a.stderr, "litterbox: %s\n", n)
	}
}

// milestoneOptions are what milestone was asked.
type milestoneOptions struct {
	Name, Message string
}

func (a *app) milestoneCommand() *cobra.Command {
	var o milestoneOptions
	cmd := &cobra.Command{
		Use:               "milestone NAME -m MESSAGE",
		Short:             "Squash a sandbox's snapshots since the last milestone into one commit",
		Example:           `  litterbox milestone fix-login -m "Fix the login redirect"`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return a.runMilestone(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.Message, "message", "m", "", "commit message of the milestone (at most 4096 bytes)")
	return cmd
}

// runMilestone squashes the sandbox's snapshots since the last milestone.
func (a *app) runMilestone(ctx context.Context, o milestoneOptions) error {
	if o.Message == "" {
		return usagef("milestone: -m MESSAGE is required")
	}
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	res, err := m.Milestone(ctx, o.Name, o.Message)
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Milestone %s squashes %d snapshot(s).\n", res.Commit, res.Squashed)
	return nil
}
