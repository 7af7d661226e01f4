package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/runner"
)

// poolOptions are what pool was asked: an action ("" to show it).
type poolOptions struct {
	Action string
	JSON   bool
	// Quiet prints nothing: the refill a create starts in the background.
	Quiet bool
	// AllRepos: show the entries of every repository on the engine, and
	// drain those of repositories that are gone.
	AllRepos bool
}

func newPoolCommand(p *program) *cobra.Command {
	var o poolOptions
	cmd := &cobra.Command{
		Use:   "pool [fill | drain]",
		Short: "Show, fill or drain this repository's warm pool of sandboxes",
		Long: `With [pool] size = N in the config, Litterbox keeps N sandboxes made ahead:
created with the sandbox's hardening, started, the helper delivered, an
empty /src. A create claims one and only copies the tree and runs the setup;
then it starts a refill in the background (litterbox pool fill, which ends
when the pool is full: there is no daemon). An entry made for another
config, image or Litterbox is never claimed: a fill removes it.

  (none)  show the size, and the entries ready for the config of now
  fill    remove stale entries and make the missing ones; waits
  drain   remove every entry (a claimed sandbox is no entry)

Sandboxes with [[ports]], forks, and on Docker or Podman those of network
mode "allow" are always made when asked for. On Kubernetes an entry is a
pod, and a claim gives it the sandbox's name as an alias (a ConfigMap).

With --all-repos, pool lists the entries of every repository on the engine,
and drain removes those of repositories that are gone (moved or deleted with
entries made), which nothing can claim again.`,
		Example: `  litterbox pool
  litterbox pool fill
  litterbox pool drain --json
  litterbox pool --all-repos
  litterbox pool drain --all-repos`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: actionArg("fill", "drain"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Action = args[0]
			}
			return runPool(cmd.Context(), p.env, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the pool as JSON")
	cmd.Flags().BoolVar(&o.Quiet, "quiet", false, "print nothing (the background refill)")
	cmd.Flags().BoolVar(&o.AllRepos, "all-repos", false, "show the entries of every repository; drain: those of repositories that are gone")
	return cmd
}

func runPool(ctx context.Context, e *env, o poolOptions) error {
	if o.Action != "" && o.Action != "fill" && o.Action != "drain" {
		return usagef("pool: unknown action %q: use fill or drain, or nothing to show the pool", o.Action)
	}
	if o.AllRepos {
		return runPoolAllRepos(ctx, e, o)
	}
	m, err := e.open(ctx, opening{configNeeded: o.Action != "drain"})
	if err != nil {
		return err
	}
	var st *create.PoolState
	switch o.Action {
	case "fill":
		st, err = m.Creator.FillPool(ctx)
	case "drain":
		st, err = m.Creator.DrainPool(ctx)
	default:
		st, err = m.Creator.PoolStatus(ctx)
	}
	if o.Quiet || st == nil {
		return err
	}
	if o.JSON {
		if werr := writeJSON(e.stdout, st); werr != nil {
			return werr
		}
		return err
	}
	printPool(e, o.Action, st)
	return err
}

func printPool(e *env, action string, st *create.PoolState) {
	for _, n := range st.Removed {
		fmt.Fprintf(e.stdout, "Removed %s.\n", n)
	}
	for _, n := range st.Made {
		fmt.Fprintf(e.stdout, "Made %s.\n", n)
	}
	if action == "drain" {
		if len(st.Removed) == 0 {
			fmt.Fprintln(e.stdout, "The pool was empty.")
		}
		return
	}
	switch {
	case st.NotPooled != "":
		fmt.Fprintf(e.stdout, "Pool: size %d, not used for this config: %s.\n", st.Size, st.NotPooled)
	case st.Size == 0 && len(st.Ready) == 0:
		fmt.Fprintln(e.stdout, "Pool: off ([pool] size = 0).")
	default:
		fmt.Fprintf(e.stdout, "Pool: %d of %d ready (config %s).\n", len(st.Ready), st.Size, st.Digest)
	}
	for _, n := range st.Ready {
		fmt.Fprintf(e.stdout, "  ready  %s\n", n)
	}
	for _, n := range st.Making {
		fmt.Fprintf(e.stdout, "  making %s\n", n)
	}
	for _, n := range st.Stale {
		fmt.Fprintf(e.stdout, "  stale  %s (litterbox pool fill removes it)\n", n)
	}
	if st.LastError != "" {
		fmt.Fprintf(e.stdout, "Last fill failed: %s\n", agenttext.Shown(st.LastError))
	}
}

func runPoolAllRepos(ctx context.Context, e *env, o poolOptions) error {
	r := e.runner(false)
	switch o.Action {
	case "fill":
		return usagef("pool fill takes no --all-repos: a pool is filled for its repository's config, in that repository")
	case "drain":
		removed, left, err := create.DrainGone(ctx, r, e.engine())
		if err != nil {
			return err
		}
		if o.JSON {
			return writeJSON(e.stdout, orNone(removed))
		}
		for _, g := range removed {
			fmt.Fprintf(e.stdout, "Removed %s of %s (gone).\n", g.Name, agenttext.Shown(g.Repo))
		}
		if len(removed) == 0 && len(left) == 0 {
			fmt.Fprintln(e.stdout, "No pool entry of a repository that is gone.")
		}
		if len(left) > 0 {
			return fmt.Errorf("could not remove: %s", strings.Join(left, ", "))
		}
		return nil
	}
	all, err := create.PoolEntriesAll(ctx, r, e.engine())
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(e.stdout, orNone(all))
	}
	if len(all) == 0 {
		fmt.Fprintln(e.stdout, "No pool entries.")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REPO\tENTRY\tSTATE")
	for _, g := range all {
		repo, state := agenttext.Shown(g.Repo), "running"
		if g.RepoGone {
			repo += " (gone)"
		}
		if !g.Running {
			state = "stopped"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", repo, g.Name, state)
	}
	return tw.Flush()
}

// refiller starts `litterbox pool fill --quiet` for this repository and
// runtime, detached: the create that took an entry returns at once, and
// no daemon is left once the pool is full.
func (e *env) refiller(ctx context.Context, root string) func() {
	return func() {
		exe, err := os.Executable()
		if err != nil {
			e.log.Warnf("warm pool: not refilled: %v", err)
			return
		}
		args := slices.Concat([]string{"--repo", root, "--runtime", e.runtime, "--log-level", "error"}, e.engineArgs(), []string{"pool", "fill", "--quiet"})
		if _, err := e.run.Run(ctx, runner.Cmd{Name: filepath.Clean(exe), Args: args, Detach: true}); err != nil {
			e.log.Warnf("warm pool: not refilled: %s", strings.TrimSpace(err.Error()))
		}
	}
}
