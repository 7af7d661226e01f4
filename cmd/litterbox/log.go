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

func (a *app) logCommand() *cobra.Command {
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
		ValidArgsFunction: a.nameArg,
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
			return a.runLog(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.Patch, "patch", "p", false, "show each commit's diff")
	cmd.Flags().BoolVar(&o.Audit, "audit", false, "show the audit log of MCP tool calls instead")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "with --audit: print the entries as JSON lines")
	return cmd
}

// runLog prints the sandbox's commits since its base, or the audit log.
func (a *app) runLog(ctx context.Context, o logOptions) error {
	if o.Audit {
		return a.printAudit(ctx, o.Name, o.JSON)
	}
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	a.warnControl(ctx, m, o.Name)
	return m.Log(ctx, o.Name, o.Patch, o.Extra, a.stdout, a.stderr)
}

func (a *app) printAudit(ctx context.Context, name string, asJSON bool) error {
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	entries, err := m.ReadAudit(name)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		fmt.Fprintln(a.stderr, "No tool calls in the audit log.")
		return nil
	}
	for _, e := range entries {
		if asJSON {
			line, err := json.Marshal(e)
			if err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, string(line))
			continue
		}
		// What an agent typed is shown with its controls escaped.
		args, _ := json.Marshal(e.Arguments)
		fmt.Fprintf(a.stdout, "%s  %-17s %-5s %5dms  %s\n", e.Time.Local().Format("2006-01-02 15:04:05"), agenttext.Inert(e.Tool), agenttext.Inert(e.Status), e.DurationMS, agenttext.Inert(string(args)))
		if e.Error != "" {
			fmt.Fprintf(a.stdout, "    error: %s\n", agenttext.Inert(e.Error))
		}
		for _, host := range slices.Sorted(maps.Keys(e.Refused)) {
			fmt.Fprintf(a.stdout, "    refused by the egress proxy: %s (%dx)\n", agenttext.Inert(host), e.Refused[host])
		}
		for _, c := range e.Commands {
			logged := runner.Logged(c.Line, c.ExitCode, time.Duration(c.DurationMS)*time.Millisecond, c.Note)
			fmt.Fprintln(a.stdout, "    "+strings.ReplaceAll(agenttext.Inert(logged), "\n", "\n    "))
		}
	}
	return nil
}
