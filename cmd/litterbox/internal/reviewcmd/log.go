package reviewcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/audit"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/present"
	"github.com/litterbox-dev/litterbox/runner"
)

// logOptions are what log was asked: a sandbox's commits (git log's own
// arguments after --), or with Audit the agents' tool calls.
type logOptions struct {
	Name               string
	Extra              []string
	Patch, Audit, JSON bool
	// With Audit: Verbose adds each call's commands; Follow goes on
	// printing calls as they start and end, until interrupted.
	Verbose, Follow bool
}

func NewLogCommand(p *cli.Program) *cobra.Command {
	var o logOptions
	cmd := &cobra.Command{
		Use:   "log NAME [-p] [-- GIT-LOG-ARGS...] | log --audit [NAME] [-v] [--follow] [--json]",
		Short: "Show the sandbox's commits since its base, or (--audit) the agents' tool calls",
		Long: `Show the sandbox's commits since its base (git log base..litterbox/NAME).

With --audit, show the audit log instead: every MCP tool call an agent made on
this repository (of one sandbox, when NAME is given) and every litterbox run
session, one line each: when, the sandbox, the tool, how long it took, how it
ended, its commit, and what it was about. -v adds every docker and git command
each call caused, as pasteable lines; --follow goes on printing calls as they
start (marked running) and end, until interrupted. The log is JSON lines in
$(git rev-parse --git-common-dir)/litterbox/audit.jsonl; --json prints them.`,
		Example:           "  litterbox log fix-login\n  litterbox log fix-login -p\n  litterbox log fix-login -- --oneline\n  litterbox log --audit fix-login\n  litterbox log --audit --follow",
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case !o.Audit && (o.Verbose || o.Follow):
				return cli.Usagef("log: -v and --follow go with --audit")
			case o.Audit && len(args) > 1:
				return cli.Usagef("log --audit takes at most one sandbox name")
			case o.Audit && len(args) == 1:
				o.Name = args[0]
			case o.Audit:
			case len(args) == 0 || cmd.ArgsLenAtDash() == 0:
				return p.NameRequired(cmd, " (or use --audit)")
			default:
				var err error
				if o.Name, o.Extra, err = cli.DashArgs(cmd, args); err != nil {
					return err
				}
			}
			return runLog(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVarP(&o.Patch, "patch", "p", false, "show each commit's diff")
	cmd.Flags().BoolVar(&o.Audit, "audit", false, "show the audit log of MCP tool calls instead")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "with --audit: print the entries as JSON lines")
	cmd.Flags().BoolVarP(&o.Verbose, "verbose", "v", false, "with --audit: show the docker and git commands of each call")
	cmd.Flags().BoolVarP(&o.Follow, "follow", "f", false, "with --audit: go on printing calls as they start and end, until interrupted")
	return cmd
}

// runLog prints the sandbox's commits since its base, or the audit log.
func runLog(ctx context.Context, e *cli.Env, o logOptions) error {
	if o.Audit {
		return printAudit(e, ctx, o)
	}
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	warnControl(e, ctx, m, o.Name)
	return m.Log(ctx, o.Name, o.Patch, o.Extra, e.Stdout, e.Stderr)
}

// auditFollowEvery is how often --follow looks for new calls.
const auditFollowEvery = 250 * time.Millisecond

func printAudit(e *cli.Env, ctx context.Context, o logOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	slug := ""
	if o.Name != "" {
		if slug, err = m.Repo.Resolve(o.Name); err != nil {
			return err
		}
	}
	log := audit.Log{Path: m.Repo.AuditPath()}
	entries, off, err := log.ReadFrom(0, slug)
	if err != nil {
		return err
	}
	if len(entries) == 0 && !o.Follow {
		fmt.Fprintln(e.Stderr, "No tool calls in the audit log.")
		return nil
	}
	if !o.JSON {
		fmt.Fprintln(e.Stdout, present.AuditHeader)
	}
	for _, entry := range entries {
		if err := printEntry(e, entry, o); err != nil {
			return err
		}
	}
	if !o.Follow {
		return nil
	}
	running := map[string]time.Time{} // the call each sandbox runs, by its start
	for {
		for s := range m.Repo.Store().All() {
			if slug != "" && s != slug {
				continue
			}
			// A run session's commits take the lock in turn: its start is
			// an entry of its own already.
			h := layout.Session(m.Repo.Layout().Lock(s))
			if h == nil || strings.HasPrefix(h.Call, agent.RunKind+": ") {
				delete(running, s)
				continue
			}
			if !running[s].Equal(h.Since) {
				running[s] = h.Since
				printRunning(e, s, *h, o.JSON)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(auditFollowEvery):
		}
		entries, off, err = log.ReadFrom(off, slug)
		if err != nil {
			return err
		}
		for _, entry := range entries {
			if err := printEntry(e, entry, o); err != nil {
				return err
			}
		}
	}
}

// printRunning prints a call that has started: with --json, as an entry
// of status "running".
func printRunning(e *cli.Env, slug string, h layout.Holder, asJSON bool) {
	if !asJSON {
		fmt.Fprintln(e.Stdout, present.AuditRunning(slug, h))
		return
	}
	tool, what, _ := strings.Cut(h.Call, ": ")
	line, _ := json.Marshal(map[string]any{"time": h.Since.UTC(), "sandbox": slug, "tool": tool, "call": what, "status": "running", "pid": h.PID})
	fmt.Fprintln(e.Stdout, string(line))
}

// printEntry prints one call: a line, with -v its details and commands.
func printEntry(e *cli.Env, entry audit.Entry, o logOptions) error {
	if o.JSON {
		line, err := json.Marshal(entry)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.Stdout, string(line))
		return nil
	}
	fmt.Fprintln(e.Stdout, present.AuditLine(entry))
	if !o.Verbose {
		return nil
	}
	// What an agent typed is shown with its controls escaped, and its <,
	// > and & as they are (json.Marshal would escape them for HTML).
	var args strings.Builder
	enc := json.NewEncoder(&args)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(entry.Arguments)
	fmt.Fprintf(e.Stdout, "    arguments: %s\n", agenttext.Inert(strings.TrimSuffix(args.String(), "\n")))
	if entry.Error != "" {
		fmt.Fprintf(e.Stdout, "    error: %s\n", agenttext.Inert(entry.Error))
	}
	if entry.ExitCode != nil && entry.Tool == "run" {
		fmt.Fprintf(e.Stdout, "    exit status %d, %d %s: %s\n", *entry.ExitCode, len(entry.Commits), cli.Plural(len(entry.Commits), "commit", "commits"), cli.ShortIDs(entry.Commits))
	}
	for _, use := range slices.Sorted(maps.Keys(entry.Injected)) {
		fmt.Fprintf(e.Stdout, "    injected by the egress proxy: %s (%dx)\n", agenttext.Inert(use), entry.Injected[use])
	}
	for _, host := range slices.Sorted(maps.Keys(entry.Refused)) {
		fmt.Fprintf(e.Stdout, "    refused by the egress proxy: %s (%dx)\n", agenttext.Inert(host), entry.Refused[host])
	}
	for _, c := range entry.Commands {
		logged := runner.Logged(c.Line, c.ExitCode, time.Duration(c.DurationMS)*time.Millisecond, c.Note)
		fmt.Fprintln(e.Stdout, "    "+strings.ReplaceAll(agenttext.Inert(logged), "\n", "\n    "))
	}
	return nil
}
