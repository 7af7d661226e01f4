package systemcmd

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/basetree"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/setupcache"
)

// cacheOptions are what cache was asked: an action, and for rm a key.
type cacheOptions struct {
	Action, Key string
	JSON        bool
	// AllRepos: ls and prune the entries of every repository on the engine.
	AllRepos bool
}

func NewCacheCommand(p *cli.Program) *cobra.Command {
	var o cacheOptions
	cmd := &cobra.Command{
		Use:   "cache ls | rm KEY | prune",
		Short: "Show or remove this repository's setup cache entries",
		Long: `A create whose setup command succeeded keeps what it added to /src (built
dependencies, downloaded modules) as a setup cache entry, keyed by the image,
the setup command and its environment, and the files named in [setup] inputs
(or the whole base tree). A later create with the same key takes the entry
instead of running the setup: where the engine has overlay volumes, its /src
and home lie over the entry, copy on write; elsewhere it copies the entry.
Entries are volumes of this repository's, on the engine; delete leaves them,
and rm and prune leave an entry while any sandbox lies over it (ls names
them, under UNDER).

A sandbox's /src lies over its commit's base tree, made by the first
create of that commit and shared, copy on write, by every later one. ls
lists those trees too; the two used last stay after their sandboxes are
deleted, for the next create, and prune removes every tree no sandbox uses.

  ls      list the entries, newest first, with their sizes and the sandboxes
          over each, then the trees
  rm KEY  remove the entry whose key starts with KEY
  prune   remove every entry a create from HEAD would not use now, and
          every base tree no sandbox uses

With --all-repos, ls lists the entries of every repository on the engine
(volumes labelled dev.litterbox.managed=cache), and prune removes those of
repositories that are gone, which nothing can use again, with their base
trees (dev.litterbox.managed=base) that no sandbox lies over.`,
		Example: `  litterbox cache ls
  litterbox cache rm 3f2a9c
  litterbox cache prune
  litterbox cache ls --all-repos
  litterbox cache prune --all-repos`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: cli.ActionArg("ls", "rm", "prune"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Action = args[0]
			if len(args) == 2 {
				o.Key = args[1]
			}
			return runCache(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the entries as JSON")
	cmd.Flags().BoolVar(&o.AllRepos, "all-repos", false, "ls: the entries of every repository; prune: those of repositories that are gone")
	return cmd
}

func runCache(ctx context.Context, e *cli.Env, o cacheOptions) error {
	switch {
	case o.Action == "rm" && o.Key == "":
		return cli.Usagef("cache rm needs the KEY of an entry (see litterbox cache ls)")
	case o.Action != "rm" && o.Key != "":
		return cli.Usagef("cache %s takes no KEY", o.Action)
	case o.Action != "ls" && o.Action != "rm" && o.Action != "prune":
		return cli.Usagef("cache: unknown action %q: use ls, rm KEY or prune", o.Action)
	case o.AllRepos && o.Action == "rm":
		return cli.Usagef("cache rm takes no --all-repos: run it in the entry's repository (litterbox cache ls --all-repos names it), or prune --all-repos for those of repositories that are gone")
	case o.AllRepos:
		return runCacheAllRepos(ctx, e, o)
	}
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	var entries []setupcache.Entry
	var kept []setupcache.InUseError
	switch o.Action {
	case "ls":
		entries, err = m.Creator.SetupCache().List(ctx)
	case "rm":
		entries, err = m.Creator.SetupCache().Remove(ctx, o.Key)
	case "prune":
		entries, kept, err = m.Creator.SetupCache().Prune(ctx)
	}
	if err != nil {
		return err
	}
	var trees []string
	if o.Action == "prune" {
		var left []string
		if trees, left = m.Creator.Bases().Prune(ctx, 0); len(left) > 0 {
			return fmt.Errorf("could not remove base tree %s", strings.Join(left, ", "))
		}
	}
	if o.JSON {
		return cli.WriteJSON(e.Stdout, cli.OrNone(entries))
	}
	if o.Action != "ls" {
		for _, entry := range entries {
			fmt.Fprintf(e.Stdout, "Removed setup cache %s (%s, %s).\n", entry.Key[:12], entry.Volume, result.HumanSize(entry.Bytes))
		}
		for _, t := range trees {
			fmt.Fprintf(e.Stdout, "Removed base tree %s.\n", strings.TrimPrefix(t, "volume "))
		}
		for _, k := range kept {
			fmt.Fprintf(e.Stdout, "Kept setup cache %s: the /src of %s lies over it.\n", k.Key[:12], strings.Join(k.Sandboxes, ", "))
		}
		if len(entries)+len(trees)+len(kept) == 0 {
			fmt.Fprintln(e.Stdout, "Nothing to prune.")
		}
		return nil
	}
	if err := listEntries(e, entries); err != nil {
		return err
	}
	return listTrees(ctx, e, m.Creator.Bases())
}

// listTrees prints the repository's base trees, with the sandboxes made
// over each.
func listTrees(ctx context.Context, e *cli.Env, b basetree.Trees) error {
	trees, err := b.List(ctx)
	if err != nil || len(trees) == 0 {
		return err
	}
	fmt.Fprintln(e.Stdout, "\nBase trees (shared by the sandboxes of a commit, copy on write):")
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMMIT\tLAST USED\tSANDBOXES\tVOLUME")
	for _, t := range trees {
		used := "-"
		if len(t.UsedBy) > 0 {
			used = strings.Join(t.UsedBy, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", shortKey(t.Commit), cli.Since(time.Since(t.Used)), used, t.Volume)
	}
	return tw.Flush()
}

// listEntries prints the setup cache entries.
func listEntries(e *cli.Env, entries []setupcache.Entry) error {
	if len(entries) == 0 {
		fmt.Fprintln(e.Stdout, "No setup cache entries.")
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tSIZE\tFILES\tHITS\tAGE\tFROM\tUNDER\tSETUP")
	for _, entry := range entries {
		size := result.HumanSize(entry.Bytes)
		if entry.State != "ready" {
			size = entry.State
		}
		under := "-"
		if len(entry.LiesUnder) > 0 {
			under = strings.Join(entry.LiesUnder, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", entry.Key[:12], size, entry.Files, entry.Hits, cli.Since(time.Since(entry.Created)), entry.From, under, entry.Setup)
	}
	return tw.Flush()
}

// runCacheAllRepos lists the entries of every repository, or removes
// those whose repository is gone.
func runCacheAllRepos(ctx context.Context, e *cli.Env, o cacheOptions) error {
	p := e.Engine().Provider(e.Runner(false))
	var entries []setupcache.RepoEntry
	var err error
	var trees []string
	if o.Action == "prune" {
		var left []string
		if trees, left, err = basetree.PruneGone(ctx, p); err == nil && len(left) > 0 {
			err = fmt.Errorf("could not remove base tree %s", strings.Join(left, ", "))
		}
		if err != nil {
			return err
		}
		entries, err = setupcache.PruneGone(ctx, p)
	} else {
		entries, err = setupcache.ListAll(ctx, p)
	}
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(e.Stdout, cli.OrNone(entries))
	}
	if o.Action == "prune" {
		for _, entry := range entries {
			fmt.Fprintf(e.Stdout, "Removed setup cache %s of %s (gone).\n", entry.Volume, agenttext.Shown(entry.Repo))
		}
		for _, t := range trees {
			fmt.Fprintf(e.Stdout, "Removed base tree %s (its repository is gone).\n", t)
		}
		if len(entries) == 0 {
			fmt.Fprintln(e.Stdout, "No setup cache entry of a repository that is gone.")
		}
		return nil
	}
	if len(entries) == 0 {
		fmt.Fprintln(e.Stdout, "No setup cache entries.")
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "REPO\tKEY\tSIZE\tFILES\tHITS\tAGE")
	for _, entry := range entries {
		repo, size, files, hits, created := agenttext.Shown(entry.Repo), "-", "-", "-", "-"
		if entry.RepoGone {
			repo += " (gone)"
		}
		if entry.Known {
			size, files, hits, created = result.HumanSize(entry.Bytes), fmt.Sprint(entry.Files), fmt.Sprint(entry.Hits), cli.Since(time.Since(entry.Created))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", repo, shortKey(entry.Key), size, files, hits, created)
	}
	return tw.Flush()
}

// shortKey is the 12 characters of a key ls shows.
func shortKey(key string) string { return key[:min(len(key), 12)] }

// CacheSummary is list --all-repos's line on the setup cache, "" when
// there is none.
func CacheSummary(entries []setupcache.RepoEntry) string {
	n, bytes, gone := setupcache.Totals(entries)
	if n == 0 {
		return ""
	}
	line := fmt.Sprintf("Setup cache: %d %s, %s", n, cli.Plural(n, "entry", "entries"), result.HumanSize(bytes))
	if unknown := n - known(entries); unknown > 0 {
		line += fmt.Sprintf(" and %d of unknown size", unknown)
	}
	if gone > 0 {
		line += fmt.Sprintf("; %d of repositories that are gone (litterbox cache prune --all-repos removes them)", gone)
	}
	return line + "."
}

func known(entries []setupcache.RepoEntry) int {
	n := 0
	for _, e := range entries {
		if e.Known {
			n++
		}
	}
	return n
}
