package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/sandbox"
)

func (a *app) listCommand() *cobra.Command {
	var allRepos, asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List sandboxes: status, age, branch, commits ahead of the base, ports",
		Example: `  litterbox list
  litterbox list --all-repos --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := a.manager(cmd.Context())
			if err != nil {
				return err
			}
			list, err := m.List(cmd.Context(), allRepos)
			if err != nil {
				return err
			}
			if asJSON {
				if list == nil {
					list = []sandbox.Info{}
				}
				return writeJSON(a.stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(a.stdout, "No sandboxes.")
				return nil
			}
			var table strings.Builder
			tw := tabwriter.NewWriter(&table, 0, 4, 2, ' ', 0)
			header := "NAME\tSTATUS\tAGE\tBRANCH\tAHEAD\tPORTS"
			if allRepos {
				header += "\tREPO"
			}
			fmt.Fprintln(tw, header)
			now := time.Now()
			for _, s := range list {
				row := fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%s", s.Name, s.Status, age(s.Created, now), s.Branch, ahead(s.CommitsAhead), portSummary(s.Ports))
				if allRepos {
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
			_, err = io.WriteString(a.stdout, a.paintColumn(out, strings.Index(out, "STATUS"), 1))
			return err
		},
	}
	cmd.Flags().BoolVar(&allRepos, "all-repos", false, "list sandboxes of every repository")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
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
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func ahead(n *int) string {
	if n == nil {
		return "-"
	}
	return strconv.Itoa(*n)
}
