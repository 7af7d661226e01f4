package reviewcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/milestone"
)

// milestoneOptions are what milestone was asked.
type milestoneOptions struct {
	Name, Message string
}

func NewMilestoneCommand(p *cli.Program) *cobra.Command {
	var o milestoneOptions
	cmd := &cobra.Command{
		Use:               "milestone NAME -m MESSAGE",
		Short:             "Squash a sandbox's snapshots since the last milestone into one commit",
		Example:           `  litterbox milestone fix-login -m "Fix the login redirect"`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runMilestone(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().StringVarP(&o.Message, "message", "m", "", "commit message of the milestone (at most 4096 bytes)")
	return cmd
}

// runMilestone squashes the sandbox's snapshots since the last milestone.
func runMilestone(ctx context.Context, e *cli.Env, o milestoneOptions) error {
	if o.Message == "" {
		return cli.Usagef("milestone: -m MESSAGE is required")
	}
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	res, err := milestone.Make(ctx, m.Repo, o.Name, o.Message)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "Milestone %s squashes %d snapshot(s).\n", res.Commit, res.Squashed)
	return nil
}
