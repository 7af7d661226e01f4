package systemcmd

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/create"
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

func NewPoolCommand(p *cli.Program) *cobra.Command {
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
		ValidArgsFunction: cli.ActionArg("fill", "drain"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Action = args[0]
			}
			return runPool(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the pool as JSON")
	cmd.Flags().BoolVar(&o.Quiet, "quiet", false, "print nothing (the background refill)")
	cmd.Flags().BoolVar(&o.AllRepos, "all-repos", false, "show the entries of every repository; drain: those of repositories that are gone")
	return cmd
}

func runPool(ctx context.Context, e *cli.Env, o poolOptions) error {
	if o.Action != "" && o.Action != "fill" && o.Action != "drain" {
		return cli.Usagef("pool: unknown action %q: use fill or drain, or nothing to show the pool", o.Action)
	}
	if o.AllRepos {
		return runPoolAllRepos(ctx, e, o)
	}
	m, err := e.Open(ctx, cli.Opening{ConfigNeeded: o.Action != "drain"})
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
		if werr := cli.WriteJSON(e.Stdout, st); werr != nil {
			return werr
		}
		return err
	}
	printPool(e, o.Action, st)
	return err
}

func printPool(e *cli.Env, action string, st *create.PoolState) {
	for _, n := range st.Removed {
		fmt.Fprintf(e.Stdout, "Removed %s.\n", n)
	}
	for _, n := range st.Made {
		fmt.Fprintf(e.Stdout, "Made %s.\n", n)
	}
	if action == "drain" {
		if len(st.Removed) == 0 {
			fmt.Fprintln(e.Stdout, "The pool was empty.")
		}
		return
	}
	switch {
	case st.NotPooled != "":
		fmt.Fprintf(e.Stdout, "Pool: size %d, not used for this config: %s.\n", st.Size, st.NotPooled)
	case st.Size == 0 && len(st.Ready) == 0:
		fmt.Fprintln(e.Stdout, "Pool: off ([pool] size = 0).")
	default:
		fmt.Fprintf(e.Stdout, "Pool: %d of %d ready (config %s).\n", len(st.Ready), st.Size, st.Digest)
	}
	for _, n := range st.Ready {
		fmt.Fprintf(e.Stdout, "  ready  %s\n", n)
	}
	for _, n := range st.Making {
		fmt.Fprintf(e.Stdout, "  making %s\n", n)
	}
	for _, n := range st.Stale {
		fmt.Fprintf(e.Stdout, "  stale  %s (litterbox pool fill removes it)\n", n)
	}
	if st.LastError != "" {
		fmt.Fprintf(e.Stdout, "Last fill failed: %s\n", agenttext.Shown(st.LastError))
	}
}

func runPoolAllRepos(ctx context.Context, e *cli.Env, o poolOptions) error {
	r := e.Runner(false)
	switch o.Action {
	case "fill":
		return cli.Usagef("pool fill takes no --all-repos: a pool is filled for its repository's config, in that repository")
	case "drain":
		removed, left, err := create.DrainGone(ctx, r, e.Engine())
		if err != nil {
			return err
		}
		if o.JSON {
			return cli.WriteJSON(e.Stdout, cli.OrNone(removed))
		}
		for _, g := range removed {
			fmt.Fprintf(e.Stdout, "Removed %s of %s (gone).\n", g.Name, agenttext.Shown(g.Repo))
		}
		if len(removed) == 0 && len(left) == 0 {
			fmt.Fprintln(e.Stdout, "No pool entry of a repository that is gone.")
		}
		if len(left) > 0 {
			return fmt.Errorf("could not remove: %s", strings.Join(left, ", "))
		}
		return nil
	}
	all, err := create.PoolEntriesAll(ctx, r, e.Engine())
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(e.Stdout, cli.OrNone(all))
	}
	if len(all) == 0 {
		fmt.Fprintln(e.Stdout, "No pool entries.")
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
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
