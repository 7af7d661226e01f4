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

type one func(context.Context, string) (sandbox.Outcome, error)
type all func(context.Context, sandbox.Scope) ([]sandbox.Outcome, error)

// bulkOptions are what pause or resume was asked: one sandbox by Name,
// or every one of this repository (AllEnvs) or of every repository.
type bulkOptions struct {
	Verb              string // "pause" or "resume"
	Name              string
	AllEnvs, AllRepos bool
}

// bulkCommand builds pause and resume, which share their shape: NAME, or
// --all-envs (this repo), or --all-repos.
func (a *app) bulkCommand(use, short, example string, pick func(*sandbox.Manager) (one, all)) *cobra.Command {
	o := bulkOptions{Verb: use}
	cmd := &cobra.Command{
		Use:               use + " NAME | --all-envs | --all-repos",
		Short:             short,
		Example:           example,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
			}
			return a.runBulk(cmd.Context(), o, pick)
		},
	}
	cmd.Flags().BoolVar(&o.AllEnvs, "all-envs", false, "every sandbox of this repository")
	cmd.Flags().BoolVar(&o.AllRepos, "all-repos", false, "every sandbox of every repository")
	return cmd
}

// runBulk pauses or resumes what o names, one line per sandbox.
func (a *app) runBulk(ctx context.Context, o bulkOptions, pick func(*sandbox.Manager) (one, all)) error {
	chosen := 0
	for _, b := range []bool{o.Name != "", o.AllEnvs, o.AllRepos} {
		if b {
			chosen++
		}
	}
	if chosen != 1 {
		return usagef("%s takes exactly one of: a sandbox NAME, --all-envs, --all-repos", o.Verb)
	}
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	doOne, doAll := pick(m)
	if o.Name != "" {
		out, err := doOne(ctx, o.Name)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, out.Message)
		return nil
	}
	scope := sandbox.ThisRepo
	if o.AllRepos {
		scope = sandbox.AllRepos
	}
	outs, err := doAll(ctx, scope)
	for _, out := range outs {
		if o.AllRepos {
			fmt.Fprintf(a.stdout, "%s (%s)\n", out.Message, out.Repo)
		} else {
			fmt.Fprintln(a.stdout, out.Message)
		}
	}
	if len(outs) == 0 && err == nil {
		fmt.Fprintf(a.stdout, "No sandboxes to %s.\n", o.Verb)
	}
	return err
}

func (a *app) pauseCommand() *cobra.Command {
	return a.bulkCommand("pause", "Freeze a sandbox's processes (docker pause); idempotent",
		"  litterbox pause fix-login\n  litterbox pause --all-envs",
		func(m *sandbox.Manager) (one, all) { return m.Pause, m.PauseAll })
}

func (a *app) resumeCommand() *cobra.Command {
	return a.bulkCommand("resume", "Resume a paused (or stopped) sandbox; idempotent",
		"  litterbox resume fix-login\n  litterbox resume --all-repos",
		func(m *sandbox.Manager) (one, all) { return m.Resume, m.ResumeAll })
}

// deleteOptions are what delete was asked.
type deleteOptions struct {
	Name  string
	Force bool
}

func (a *app) deleteCommand() *cobra.Command {
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
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return a.runDelete(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVarP(&o.Force, "force", "f", false, "delete even if the sandbox is active")
	return cmd
}

// runDelete removes the sandbox o names and says what went.
func (a *app) runDelete(ctx context.Context, o deleteOptions) error {
	if a.repo != "" {
		if _, serr := os.Stat(a.repo); errors.Is(serr, fs.ErrNotExist) {
			return a.deleteOrphan(ctx, o)
		}
	}
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	d, err := m.Delete(ctx, o.Name, o.Force)
	if d != nil {
		if len(d.Removed) > 0 {
			fmt.Fprintf(a.stdout, "Removed %s.\n", strings.Join(d.Removed, ", "))
		}
		if d.BranchTip != "" {
			fmt.Fprintf(a.stdout, "Branch %s was at %s (recover with: git branch %s %s)\n", m.Names(d.Name).Branch, d.BranchTip, m.Names(d.Name).Branch, d.BranchTip)
		}
		a.printLeftAlone(d)
		if err == nil {
			fmt.Fprintf(a.stdout, "Deleted sandbox '%s'.\n", d.Name)
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
func (a *app) printLeftAlone(d *sandbox.Deleted) {
	for _, l := range d.LeftAlone {
		fmt.Fprintf(a.stdout, "Left alone: %s.\n", l)
	}
}

func (a *app) deleteOrphan(ctx context.Context, o deleteOptions) error {
	abs, err := filepath.Abs(a.repo)
	if err != nil {
		return err
	}
	d, err := sandbox.DeleteOrphan(ctx, a.runner(), a.engine(), abs, o.Name, o.Force)
	if d != nil && len(d.Removed) > 0 {
		fmt.Fprintf(a.stdout, "Removed %s.\n", strings.Join(d.Removed, ", "))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Deleted sandbox '%s' of %s, which no longer exists (its branch and state went with it).\n", d.Name, abs)
	return nil
}
