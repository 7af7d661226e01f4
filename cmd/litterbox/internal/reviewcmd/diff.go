package reviewcmd

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
)

// diffOptions are what diff was asked: a sandbox, and git diff's own
// arguments after --.
type diffOptions struct {
	Name  string
	Extra []string
}

func NewDiffCommand(p *cli.Program) *cobra.Command {
	return &cobra.Command{
		Use:   "diff NAME [-- GIT-DIFF-ARGS...]",
		Short: "Show the sandbox's changes since its base (base..litterbox/NAME)",
		Example: `  litterbox diff fix-login
  litterbox diff fix-login -- --stat
  litterbox diff fix-login -- src/`,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || cmd.ArgsLenAtDash() == 0 {
				return p.NameRequired(cmd, "")
			}
			name, extra, err := cli.DashArgs(cmd, args)
			if err != nil {
				return err
			}
			return runDiff(cmd.Context(), p.Env, diffOptions{Name: name, Extra: extra})
		},
	}
}

// runDiff prints base..litterbox/NAME, after a warning about files that
// steer this machine.
func runDiff(ctx context.Context, e *cli.Env, o diffOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	warnControl(e, ctx, m, o.Name)
	return m.Diff(ctx, o.Name, o.Extra, e.Stdout, e.Stderr)
}
