package reviewcmd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/present"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// syncOptions are what sync was asked.
type syncOptions struct {
	Name, Onto string
	JSON       bool
}

func NewSyncCommand(p *cli.Program) *cobra.Command {
	var o syncOptions
	cmd := &cobra.Command{
		Use:   "sync NAME [--onto REF]",
		Short: "Move a sandbox onto the current tip of your branch",
		Long: "Move a sandbox onto the current tip of your branch (HEAD, or --onto REF): its commits are replayed there as git objects, " +
			"and /src is brought to the new tree in place, its ignored files, home and running services kept. " +
			"A conflict leaves the files with their markers in /src and in a commit of their own that names them, and sync exits 1. " +
			"Your work tree, index and HEAD are never touched; the tip before stays in refs/litterbox/NAME/presync.",
		Example:           "  litterbox sync fix-login\n  litterbox sync fix-login --onto release-2.1",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runSync(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().StringVar(&o.Onto, "onto", "", "a branch, tag or commit of yours to move onto (default: HEAD)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print what the sync did as JSON")
	return cmd
}

func runSync(ctx context.Context, e *cli.Env, o syncOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	s, err := m.Sync(ctx, o.Name, sandbox.SyncOptions{Onto: o.Onto})
	if err != nil {
		return err
	}
	if o.JSON {
		if err := json.NewEncoder(e.Stdout).Encode(s); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(e.Stdout, present.Synced(s))
	}
	if len(s.Conflicts) > 0 {
		return fmt.Errorf("sync of '%s' left conflicts in %d file(s); resolve the markers in the sandbox (or have its agent do it), then review as usual", s.Name, len(s.Conflicts))
	}
	return nil
}
