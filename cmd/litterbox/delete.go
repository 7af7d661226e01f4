package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// deleteOptions are what delete was asked.
type deleteOptions struct {
	Names []string
	Force bool
	// AllEnvs deletes every sandbox of the repository, once Yes or a
	// person at the terminal agrees.
	AllEnvs, Yes bool
}

func newDeleteCommand(p *cli.Program) *cobra.Command {
	var o deleteOptions
	cmd := &cobra.Command{
		Use:   "delete NAME... | --all-envs",
		Short: "Remove sandboxes: their containers, volumes, branches and state",
		Long: `Remove a sandbox: its container, volume, branch litterbox/NAME, refs and state.
An active (running) sandbox is refused unless --force is given; pause it first
or pass --force. The deleted branch's last commit is printed so the work can
still be recovered with git branch.

Several names delete each in turn, once every one is found (a typo deletes
nothing); one that cannot be deleted (active, without --force) is reported
and the others still go.

When --repo names a repository that no longer exists (moved or deleted, as
list --all-repos shows), delete removes that sandbox's container and volume,
found by their labels; its branch and state went with the repository.

--all-envs deletes every sandbox of this repository, after asking at a
terminal; elsewhere it needs --yes. Active sandboxes still need --force.`,
		Example:           "  litterbox delete fix-login\n  litterbox delete fix-login --force\n  litterbox delete try-a try-b try-c\n  litterbox delete --all-envs --force --yes\n  litterbox --repo /path/of/a/deleted/repo delete fix-login --force",
		ValidArgsFunction: p.NamesArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) > 0) == o.AllEnvs {
				return cli.UsageError{Err: errors.New("delete takes exactly one of: sandbox NAMEs, --all-envs")}
			}
			o.Names = args
			return runDelete(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVarP(&o.Force, "force", "f", false, "delete even if the sandbox is active")
	cmd.Flags().BoolVar(&o.AllEnvs, "all-envs", false, "every sandbox of this repository")
	cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "with --all-envs: do not ask")
	return cmd
}

// runDelete removes the sandbox o names and says what went.
func runDelete(ctx context.Context, e *cli.Env, o deleteOptions) error {
	if e.Repo != "" {
		if _, serr := os.Stat(e.Repo); errors.Is(serr, fs.ErrNotExist) {
			return deleteOrphan(e, ctx, o)
		}
	}
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	if o.AllEnvs {
		return deleteAll(e, ctx, m, o)
	}
	if len(o.Names) == 1 {
		return deleteOne(e, ctx, m, o.Names[0], o.Force)
	}
	if err := allKnown(ctx, m, o.Names); err != nil {
		return err
	}
	return deleteEach(e, ctx, m, o.Names, o.Force)
}

// allKnown refuses a list of names one of which no sandbox has, before
// any is deleted: a typo among them must not leave the rest half done.
func allKnown(ctx context.Context, m *sandbox.Manager, names []string) error {
	var unknown []string
	for _, n := range names {
		slug, err := hostrepo.ParseName(n)
		if err != nil {
			return cli.UsageError{Err: err}
		}
		if ok, err := m.Repo.Known(ctx, slug); err != nil {
			return err
		} else if !ok {
			unknown = append(unknown, slug)
		}
	}
	if len(unknown) > 0 {
		return fmt.Errorf("no sandbox named %s in this repository (litterbox list shows them); nothing deleted", strings.Join(unknown, ", "))
	}
	return nil
}

// deleteEach deletes each sandbox of names, going on past one it cannot
// delete, and fails at the end if there was one.
func deleteEach(e *cli.Env, ctx context.Context, m *sandbox.Manager, names []string, force bool) error {
	var failed []string
	for _, name := range names {
		if err := deleteOne(e, ctx, m, name, force); err != nil {
			fmt.Fprintf(e.Stderr, "Error: %s\n", cli.Sentence(err.Error()))
			failed = append(failed, name)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d sandbox(es) not deleted: %s", len(failed), len(names), strings.Join(failed, ", "))
	}
	return nil
}

// deleteAll deletes every sandbox of the repository, once agreed; it goes
// on past a sandbox it cannot delete and fails at the end if there was one.
func deleteAll(e *cli.Env, ctx context.Context, m *sandbox.Manager, o deleteOptions) error {
	list, err := m.List(ctx, false)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(e.Stdout, "No sandboxes to delete.")
		return nil
	}
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.Name
	}
	if err := confirmDeleteAll(e, names, o.Yes); err != nil {
		return err
	}
	return deleteEach(e, ctx, m, names, o.Force)
}

// confirmDeleteAll asks at a terminal; elsewhere deleting every sandbox
// needs --yes.
func confirmDeleteAll(e *cli.Env, names []string, yes bool) error {
	if yes {
		return nil
	}
	what := fmt.Sprintf("%d sandbox(es) (%s) with their branches", len(names), strings.Join(names, ", "))
	refusal := fmt.Errorf("nothing deleted: --all-envs deletes %s; run again with --yes to go ahead", what)
	if !cli.IsTerminal(e.Stdin) || !cli.IsTerminal(e.Stderr) {
		return refusal
	}
	fmt.Fprintf(e.Stderr, "Delete %s? [y/N] ", what)
	answer, _ := bufio.NewReader(e.Stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return refusal
	}
	return nil
}

// deleteOne deletes sandbox name and says what went.
func deleteOne(e *cli.Env, ctx context.Context, m *sandbox.Manager, name string, force bool) error {
	d, err := m.Delete(ctx, name, force)
	if d != nil {
		if len(d.Removed) > 0 {
			fmt.Fprintf(e.Stdout, "Removed %s.\n", strings.Join(d.Removed, ", "))
		}
		if d.BranchTip != "" {
			fmt.Fprintf(e.Stdout, "Branch %s was at %s (recover with: git branch %s %s)\n", m.Repo.Names(d.Name).Branch, d.BranchTip, m.Repo.Names(d.Name).Branch, d.BranchTip)
		}
		cli.PrintLeftAlone(e, d)
		if err == nil {
			fmt.Fprintf(e.Stdout, "Deleted sandbox '%s'.\n", d.Name)
		}
	}
	var partial *sandbox.PartialDeleteError
	if errors.As(err, &partial) {
		return fmt.Errorf("%w; retry with: litterbox delete %s --force", err, d.Name)
	}
	return err
}

func deleteOrphan(e *cli.Env, ctx context.Context, o deleteOptions) error {
	abs, err := filepath.Abs(e.Repo)
	if err != nil {
		return err
	}
	if len(o.Names) != 1 {
		return cli.UsageError{Err: fmt.Errorf("delete in a repository that no longer exists (%s) takes one sandbox NAME at a time", abs)}
	}
	d, err := sandbox.DeleteOrphan(ctx, e.Runner(false), e.Engine(), abs, o.Names[0], o.Force)
	if d != nil && len(d.Removed) > 0 {
		fmt.Fprintf(e.Stdout, "Removed %s.\n", strings.Join(d.Removed, ", "))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "Deleted sandbox '%s' of %s, which no longer exists (its branch and state went with it).\n", d.Name, abs)
	return nil
}
