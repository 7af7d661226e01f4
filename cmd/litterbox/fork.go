package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/create"
)

// forkOptions are what fork was asked.
type forkOptions struct {
	Source, Name, Network string
	JSON, Quiet           bool
}

func newForkCommand(p *cli.Program) *cobra.Command {
	var o forkOptions
	cmd := &cobra.Command{
		Use:   "fork SRC NEW",
		Short: "Make sandbox NEW from SRC's current state (files, ignored ones too, and branch)",
		Long: `Make sandbox NEW from SRC as it is now: branch litterbox/NEW starts at SRC's
tip, and NEW's /src is a copy of SRC's, ignored files (built dependencies,
caches) included, so no setup runs. NEW runs SRC's image; the rest of its
configuration is what create would use now. SRC keeps running; what its
background processes changed is committed on its branch first.`,
		Example: `  litterbox fork parser-a parser-b
  litterbox fork fix-login fix-login-alt --json`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Source, o.Name = args[0], args[1]
			return runFork(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().StringVar(&o.Network, "network", "", "network for the new sandbox, as create's --network")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "do not show progress")
	return cmd
}

func runFork(ctx context.Context, e *cli.Env, o forkOptions) error {
	m, err := e.Open(ctx, cli.Opening{ConfigNeeded: true})
	if err != nil {
		return err
	}
	progress := showProgress(e, m, o.Quiet || o.JSON)
	c, err := m.Creator.Fork(ctx, create.ForkOptions{Source: o.Source, Name: o.Name, Network: o.Network, Progress: progress})
	if err != nil {
		return err
	}
	return reportCreated(e, c, o.JSON)
}
