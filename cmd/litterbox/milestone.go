package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

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
