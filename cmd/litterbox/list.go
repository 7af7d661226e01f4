package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/sandbox"
)

func (a *app) listCommand() *cobra.Command {
	var allRepos, asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List sandboxes and their status",
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
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			if allRepos {
				fmt.Fprintln(tw, "NAME\tSTATUS\tBRANCH\tPORTS\tCONTAINER\tREPO")
			} else {
				fmt.Fprintln(tw, "NAME\tSTATUS\tBRANCH\tPORTS\tCONTAINER")
			}
			for _, s := range list {
				if allRepos {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Status, s.Branch, portSummary(s.Ports), s.Container, s.Repo)
				} else {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Status, s.Branch, portSummary(s.Ports), s.Container)
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&allRepos, "all-repos", false, "list sandboxes of every repository")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
