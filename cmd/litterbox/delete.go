package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// deleteOptions are what delete was asked.
type deleteOptions struct {
	Name  string
	Force bool
}

func newDeleteCommand(p *program) *cobra.Command {
	var o deleteOptions
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Remove a sandbox: its container, volume, branch and state",
		Long: `Remove a sandbox: its container, volume, branch litterbox/NAME, refs and state.
An active (running) sandbox is refused unless --force is given; pause it first
or pass --force. The deleted branch's last commit is printed so the work can
still be recovered with git branch.

When --repo names a repository that no longer exists (moved or deleted, as
list --all-repos shows), delete removes that sandbox's container and volume,
found by their labels; its branch and state went with the repository.`,
		Example:           "  litterbox delete fix-login\n  litterbox delete fix-login --force\n  litterbox --repo /path/of/a/deleted/repo delete fix-login --force",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: p.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runDelete(cmd.Context(), p.env, o)
		},
	}
	cmd.Flags().BoolVarP(&o.Force, "force", "f", false, "delete even if the sandbox is active")
	return cmd
}

// runDelete removes the sandbox o names and says what went.
func runDelete(ctx context.Context, e *env, o deleteOptions) error {
	if e.repo != "" {
		if _, serr := os.Stat(e.repo); errors.Is(serr, fs.ErrNotExist) {
			return e.deleteOrphan(ctx, o)
		}
	}
	m, err := e.manager(ctx)
	if err != nil {
		return err
	}
	d, err := m.Delete(ctx, o.Name, o.Force)
	if d != nil {
		if len(d.Removed) > 0 {
			fmt.Fprintf(e.stdout, "Removed %s.\n", strings.Join(d.Removed, ", "))
		}
		if d.BranchTip != "" {
			fmt.Fprintf(e.stdout, "Branch %s was at %s (recover with: git branch %s %s)\n", m.Names(d.Name).Branch, d.BranchTip, m.Names(d.Name).Branch, d.BranchTip)
		}
		e.printLeftAlone(d)
		if err == nil {
			fmt.Fprintf(e.stdout, "Deleted sandbox '%s'.\n", d.Name)
		}
	}
	var partial *sandbox.PartialDeleteError
	if errors.As(err, &partial) {
		return fmt.Errorf("%w; retry with: litterbox delete %s --force", err, d.Name)
	}
	return err
}

// printLeftAlone names what a delete did not touch because another
// repository owns it.
func (e *env) printLeftAlone(d *sandbox.Deleted) {
	for _, l := range d.LeftAlone {
		fmt.Fprintf(e.stdout, "Left alone: %s.\n", l)
	}
}

func (e *env) deleteOrphan(ctx context.Context, o deleteOptions) error {
	abs, err := filepath.Abs(e.repo)
	if err != nil {
		return err
	}
	d, err := sandbox.DeleteOrphan(ctx, e.runner(false), e.engine(), abs, o.Name, o.Force)
	if d != nil && len(d.Removed) > 0 {
		fmt.Fprintf(e.stdout, "Removed %s.\n", strings.Join(d.Removed, ", "))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Deleted sandbox '%s' of %s, which no longer exists (its branch and state went with it).\n", d.Name, abs)
	return nil
}
