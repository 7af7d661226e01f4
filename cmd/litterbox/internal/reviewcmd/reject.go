package reviewcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
)

// rejectOptions are what reject was asked.
type rejectOptions struct {
	Name, Message string
}

func NewRejectCommand(p *cli.Program) *cobra.Command {
	var o rejectOptions
	cmd := &cobra.Command{
		Use:   "reject NAME -m REASON",
		Short: "Send a sandbox's work back to its agent with the reason",
		Long: "Send a sandbox's work back to its agent with the reason. The agent reads it at the head of its next tool result " +
			"and in sandbox-list; list shows the sandbox as rejected until the agent's next call. Nothing in the sandbox changes.",
		Example:           `  litterbox reject fix-login -m "the redirect loses the query string; keep it and add a test"`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runReject(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().StringVarP(&o.Message, "message", "m", "", "why, for the agent to act on (at most 4096 bytes)")
	return cmd
}

// runReject records the rejection for the agent to read.
func runReject(ctx context.Context, e *cli.Env, o rejectOptions) error {
	if o.Message == "" {
		return cli.Usagef("reject: -m REASON is required: the agent reads it to know what to change")
	}
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	if _, err := m.Reject(ctx, o.Name, o.Message); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "Rejected sandbox '%s': its agent reads the reason with its next tool call.\n", o.Name)
	return nil
}
