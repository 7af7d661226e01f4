package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/audit"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// runOptions are what run was asked.
type runOptions struct {
	Name string
	Cmd  []string // empty: [agent] command
}

func newRunCommand(p *cli.Program) *cobra.Command {
	return &cobra.Command{
		Use:   "run NAME [-- CMD [ARG...]]",
		Short: "Run an agent (or any command) inside a sandbox, committing what it changes as it works",
		Long: `Run CMD inside the sandbox, as the sandbox user, in /src, with the sandbox's
environment and secrets, on your terminal (Ctrl-C and the window size pass
through), until it exits; litterbox exits with its status. Without CMD, run
starts the project's agent, [agent] command in the config.

While it runs, what it changed is committed to the sandbox's branch each time
the files have been still for a moment (and at least every 30 s while they
keep changing), as "run: PATHS (N files)", the command in the body, and once more when it exits. When it
exits (or litterbox is interrupted), every process it started is stopped. If
litterbox itself is killed, nothing is lost: the sandbox's next call commits
what is left. The agent never runs on your machine: review and take its work
with diff, log and apply, as for an agent that works through MCP.`,
		Example: `  litterbox run fix-login -- claude
  litterbox run fix-login                 # [agent] command = ["claude"]
  litterbox run fix-login -- sh -c 'make test'`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 && cmd.ArgsLenAtDash() != 1 {
				return cli.Usagef("run: put -- between the sandbox name and the command (litterbox run NAME -- CMD...)")
			}
			return runRun(cmd.Context(), p.Env, runOptions{Name: args[0], Cmd: args[1:]})
		},
	}
}

// runRun runs the session and reports it: in the audit log (its start and
// its end), and on stderr once it is over.
func runRun(ctx context.Context, e *cli.Env, o runOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	// The session's snapshots go over a channel kept open.
	m.Agent.KeepChannels()
	defer m.Agent.Close()
	cmd := o.Cmd
	if len(cmd) == 0 {
		if m.Repo.ConfigErr != nil {
			return m.Repo.ConfigErr
		}
		if cmd = m.Repo.Config.AgentCommand; len(cmd) == 0 {
			return cli.Usagef("run: no command: give one after -- (litterbox run %s -- claude), or name the project's agent with [agent] command in %s", o.Name, config.LocalFile)
		}
	}
	slug, err := hostrepo.ParseName(o.Name)
	if err != nil {
		return err
	}
	line := runner.Join(cmd)
	start := time.Now()
	entry := audit.Entry{Time: start.UTC(), Tool: "run", Sandbox: slug, Arguments: map[string]any{"command": line}, Status: audit.StatusStarted, PID: os.Getpid()}
	recordAudit(e, m, entry)
	trail := &runner.Trail{}
	tty := cli.IsTerminal(e.Stdin) && cli.IsTerminal(e.Stdout)
	sb, err := m.Open(o.Name)
	if err != nil {
		return err
	}
	res, err := sb.Run(sayWaiting(e, runner.WithTrail(ctx, trail)), agent.RunOptions{ExecOptions: agent.ExecOptions{
		Cmd: cmd, Interactive: true, TTY: tty, Secrets: true,
		Streams: box.Streams{Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr},
	}})
	entry.Status, entry.DurationMS, entry.Commands = audit.StatusOK, time.Since(start).Milliseconds(), trail.Commands()
	if res != nil {
		entry.ExitCode, entry.Commits = &res.ExitCode, res.Commits
	}
	if err != nil {
		entry.Status, entry.Error = audit.StatusError, err.Error()
	}
	if a, aerr := m.Proxies().ActivityOf(context.WithoutCancel(ctx), slug, start); aerr == nil {
		entry.Refused, entry.Injected = audit.Counts(a.Refused), audit.Counts(a.Injected)
	}
	recordAudit(e, m, entry)
	if res != nil {
		reportRun(e, m, slug, line, res)
	}
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return cli.ExitCode(res.ExitCode)
	}
	return nil
}

// audit appends a session's entry; a log that cannot be written is said,
// and the session goes on.
func recordAudit(e *cli.Env, m *sandbox.Manager, entry audit.Entry) {
	if err := m.Repo.AppendAudit(entry); err != nil {
		fmt.Fprintf(e.Stderr, "litterbox: audit log: %v\n", err)
	}
}

// reportRun says what a session committed.
func reportRun(e *cli.Env, m *sandbox.Manager, slug, line string, res *result.Run) {
	branch := m.Repo.Names(slug).Branch
	switch len(res.Commits) {
	case 0:
		fmt.Fprintf(e.Stderr, "litterbox: run: %s changed nothing git would track; %s is as it was\n", line, branch)
	default:
		fmt.Fprintf(e.Stderr, "litterbox: run: %d %s on %s (%s); litterbox diff %s shows them\n", len(res.Commits), cli.Plural(len(res.Commits), "commit", "commits"), branch, cli.ShortIDs(res.Commits), slug)
	}
}
