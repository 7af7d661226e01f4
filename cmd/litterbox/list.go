package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/systemcmd"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/ports"
	"github.com/litterbox-dev/litterbox/internal/present"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/setupcache"
)

// listOptions are what list was asked.
type listOptions struct {
	AllRepos, JSON bool
}

func newListCommand(p *cli.Program) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List sandboxes: status, owner, age, idle time, branch, commits ahead of the base, ports",
		Example: `  litterbox list
  litterbox list --all-repos --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runList(cmd.Context(), p.Env, o) },
	}
	cmd.Flags().BoolVar(&o.AllRepos, "all-repos", false, "list sandboxes of every repository")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	return cmd
}

// runList prints the sandboxes as a table (status coloured on a terminal)
// or as JSON.
func runList(ctx context.Context, e *cli.Env, o listOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	list, err := m.List(ctx, o.AllRepos)
	if err != nil {
		return err
	}
	if err := m.Forecast(ctx, list); err != nil {
		// The list stands without it.
		fmt.Fprintf(e.Stderr, "Note: no merge forecast: %v\n", err)
	}
	if o.JSON {
		if list == nil {
			list = []sandbox.Info{}
		}
		return cli.WriteJSON(e.Stdout, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.Stdout, "No sandboxes.")
		return cacheTotals(e, ctx, m, o)
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
	header := "NAME\tSTATUS\tOWNER\tAGE\tIDLE\tBRANCH\tAHEAD\tPORTS"
	if o.AllRepos {
		header += "\tREPO"
	}
	fmt.Fprintln(tw, header)
	now := time.Now()
	for _, s := range list {
		owner, idle := "-", "-"
		if s.Repo == m.Repo.RepoPath {
			owner, idle = present.Owner(s.Owner), idleFor(s, now)
		}
		row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", s.Name, s.Status, owner, age(s.Created, now), idle, s.Branch, ahead(s.CommitsAhead), portSummary(s.Ports))
		if o.AllRepos {
			row += "\t" + s.Repo
			if s.RepoGone {
				row += " (gone)"
			}
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	out := table.String()
	if _, err = io.WriteString(e.Stdout, e.PaintColumn(out, strings.Index(out, "STATUS"), 1)); err != nil {
		return err
	}
	for _, s := range list {
		if s.Agent != nil {
			fmt.Fprintf(e.Stdout, "%s: an agent runs: %s (since %s, litterbox run process %d)\n", s.Name, agenttext.Inert(agenttext.Elide(s.Agent.Command, 100)), s.Agent.Since.Local().Format(time.DateTime), s.Agent.PID)
		}
		if len(s.Refused) > 0 {
			fmt.Fprintf(e.Stdout, "%s: its egress proxy refused %s\n", s.Name, egressproxy.RefusedSummary(s.Refused))
		}
		if len(s.Background) > 0 {
			fmt.Fprintf(e.Stdout, "%s: background commands %s (litterbox service %s status)\n", s.Name, agenttext.Inert(strings.Join(s.Background, ", ")), s.Name)
		}
		if line := present.ReviewLine(s.Review); line != "" {
			fmt.Fprintf(e.Stdout, "%s: %s\n", s.Name, line)
		}
		if line := present.ForecastLine(s.Forecast); line != "" {
			fmt.Fprintf(e.Stdout, "%s: %s\n", s.Name, line)
		}
	}
	return cacheTotals(e, ctx, m, o)
}

// cacheTotals ends list --all-repos with the setup cache's size, where
// volumes of removed repositories otherwise pile up unseen.
func cacheTotals(e *cli.Env, ctx context.Context, m *sandbox.Manager, o listOptions) error {
	if !o.AllRepos {
		return nil
	}
	entries, err := setupcache.ListAll(ctx, m.Repo.Provider)
	if err != nil {
		return err
	}
	if line := systemcmd.CacheSummary(entries); line != "" {
		fmt.Fprintln(e.Stdout, line)
	}
	return nil
}

// createdLayouts are how docker and podman print a container's creation time,
// and how state records keep it.
var createdLayouts = []string{"2006-01-02 15:04:05 -0700 MST", "2006-01-02 15:04:05.999999999 -0700 MST"}

// age renders how long ago a sandbox was made, as "45s", "12m", "3h" or "5d".
func age(created string, now time.Time) string {
	var t time.Time
	for _, l := range createdLayouts {
		if p, err := time.Parse(l, created); err == nil {
			t = p
			break
		}
	}
	if t.IsZero() {
		return "-"
	}
	return cli.Since(now.Sub(t))
}

// idleFor is how long sandbox s has had no call: "busy" while one (or a
// run session) runs, else since its last call ended or, if none has run,
// since it was made.
func idleFor(s sandbox.Info, now time.Time) string {
	switch {
	case s.Call != nil || s.Agent != nil:
		return "busy"
	case !s.LastActivity.IsZero():
		return cli.Since(now.Sub(s.LastActivity))
	}
	return age(s.Created, now)
}

func ahead(n *int) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(*n)
}

func portSummary(ports []ports.Port) string {
	if len(ports) == 0 {
		return "-"
	}
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprintf("%s=%d", p.Name, p.HostPort)
	}
	return strings.Join(parts, ",")
}
