package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/runner"
)

// logOptions are what log was asked: a sandbox's commits (git log's own
// arguments after --), or with Audit the agents' tool calls.
type logOptions struct {
	Name               string
	Extra              []string
	Patch, Audit, JSON bool
}

func newLogCommand(p *program) *cobra.Command {
	var o logOptions
	cmd := &cobra.Command{
		Use:   "log NAME [-p] [-- GIT-LOG-ARGS...] | log --audit [NAME]",
		Short: "Show the sandbox's commits since its base, or (--audit) the agents' tool calls",
		Long: `Show the sandbox's commits since its base (git log base..litterbox/NAME).

With --audit, show the audit log instead: every MCP tool call an agent made on
this repository (of one sandbox, when NAME is given), with its arguments (file
contents as their size and SHA-256), its result, how long it took, and every
docker and git command it caused, as pasteable lines. The log is JSON lines in
$(git rev-parse --git-common-dir)/litterbox/audit.jsonl; --json prints them.`,
		Example:           "  litterbox log fix-login\n  litterbox log fix-login -p\n  litterbox log fix-login -- --oneline\n  litterbox log --audit fix-login",
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: p.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.Audit && len(args) > 1:
				return usagef("log --audit takes at most one sandbox name")
			case o.Audit && len(args) == 1:
				o.Name = args[0]
			case o.Audit:
			case len(args) == 0:
				return usagef("log: name the sandbox (or use --audit)")
			default:
				var err error
				if o.Name, o.Extra, err = dashArgs(cmd, args); err != nil {
					return err
				}
			}
			return runLog(cmd.Context(), p.env, o)
		},
	}
	cmd.Flags().BoolVarP(&o.Patch, "patch", "p", false, "show each commit's diff")
	cmd.Flags().BoolVar(&o.Audit, "audit", false, "show the audit log of MCP tool calls instead")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "with --audit: print the entries as JSON lines")
	return cmd
}

// runLog prints the sandbox's commits since its base, or the audit log.
func runLog(ctx context.Context, e *env, o logOptions) error {
	if o.Audit {
		return e.printAudit(ctx, o.Name, o.JSON)
	}
	m, err := e.manager(ctx)
	if err != nil {
		return err
	}
	e.warnControl(ctx, m, o.Name)
	return m.Log(ctx, o.Name, o.Patch, o.Extra, e.stdout, e.stderr)
}

func (e *env) printAudit(ctx context.Context, name string, asJSON bool) error {
	m, err := e.manager(ctx)
	if err != nil {
		return err
	}
	entries, err := m.ReadAudit(name)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		fmt.Fprintln(e.stderr, "No tool calls in the audit log.")
		return nil
	}
	for _, entry := range entries {
		if asJSON {
			line, err := json.Marshal(entry)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, string(line))
			continue
		}
		// What an agent typed is shown with its controls escaped.
		args, _ := json.Marshal(entry.Arguments)
		fmt.Fprintf(e.stdout, "%s  %-17s %-5s %5dms  %s\n", entry.Time.Local().Format("2006-01-02 15:04:05"), agenttext.Inert(entry.Tool), agenttext.Inert(entry.Status), entry.DurationMS, agenttext.Inert(string(args)))
		if entry.Error != "" {
			fmt.Fprintf(e.stdout, "    error: %s\n", agenttext.Inert(entry.Error))
		}
		if entry.ExitCode != nil {
			fmt.Fprintf(e.stdout, "    exit status %d, %d %s: %s\n", *entry.ExitCode, len(entry.Commits), plural(len(entry.Commits), "commit", "commits"), shortIDs(entry.Commits))
		}
		for _, use := range slices.Sorted(maps.Keys(entry.Injected)) {
			fmt.Fprintf(e.stdout, "    injected by the egress proxy: %s (%dx)\n", agenttext.Inert(use), entry.Injected[use])
		}
		for _, host := range slices.Sorted(maps.Keys(entry.Refused)) {
			fmt.Fprintf(e.stdout, "    refused by the egress proxy: %s (%dx)\n", agenttext.Inert(host), entry.Refused[host])
		}
		for _, c := range entry.Commands {
			logged := runner.Logged(c.Line, c.ExitCode, time.Duration(c.DurationMS)*time.Millisecond, c.Note)
			fmt.Fprintln(e.stdout, "    "+strings.ReplaceAll(agenttext.Inert(logged), "\n", "\n    "))
		}
	}
	return nil
}
