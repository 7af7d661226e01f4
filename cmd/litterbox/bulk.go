package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
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
func newBulkCommand(p *cli.Program, use, short, example string, pick func(*sandbox.Manager) (one, all)) *cobra.Command {
	o := bulkOptions{Verb: use}
	cmd := &cobra.Command{
		Use:               use + " NAME | --all-envs | --all-repos",
		Short:             short,
		Example:           example,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
			}
			return runBulk(cmd.Context(), p.Env, o, pick)
		},
	}
	cmd.Flags().BoolVar(&o.AllEnvs, "all-envs", false, "every sandbox of this repository")
	cmd.Flags().BoolVar(&o.AllRepos, "all-repos", false, "every sandbox of every repository")
	return cmd
}

// runBulk pauses or resumes what o names, one line per sandbox.
func runBulk(ctx context.Context, e *cli.Env, o bulkOptions, pick func(*sandbox.Manager) (one, all)) error {
	chosen := 0
	for _, b := range []bool{o.Name != "", o.AllEnvs, o.AllRepos} {
		if b {
			chosen++
		}
	}
	if chosen != 1 {
		return cli.Usagef("%s takes exactly one of: a sandbox NAME, --all-envs, --all-repos", o.Verb)
	}
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	doOne, doAll := pick(m)
	if o.Name != "" {
		out, err := doOne(ctx, o.Name)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.Stdout, out.Message)
		return nil
	}
	scope := sandbox.ThisRepo
	if o.AllRepos {
		scope = sandbox.AllRepos
	}
	outs, err := doAll(ctx, scope)
	for _, out := range outs {
		if o.AllRepos {
			fmt.Fprintf(e.Stdout, "%s (%s)\n", out.Message, out.Repo)
		} else {
			fmt.Fprintln(e.Stdout, out.Message)
		}
	}
	if len(outs) == 0 && err == nil {
		fmt.Fprintf(e.Stdout, "No sandboxes to %s.\n", o.Verb)
	}
	return err
}
