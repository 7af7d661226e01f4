package reviewcmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/steering"
)

// applyOptions are what apply or merge was asked.
type applyOptions struct {
	Name string
	// Names are merge's sandboxes: several, or one under [review] check,
	// make a queue (runQueue).
	Names              []string
	Extra              []string // git cherry-pick's own arguments, after --
	Merge, Squash, Yes bool
}

func NewApplyCommand(p *cli.Program, merge bool) *cobra.Command {
	o := applyOptions{Merge: merge}
	use, short := "apply", "Bring the sandbox's new commits onto the current branch (git cherry-pick); the sandbox stays"
	example := "  litterbox apply fix-login\n  litterbox apply fix-login --squash\n  litterbox apply fix-login -- --signoff"
	if merge {
		use, short = "merge", "Apply the sandbox's commits, then delete the sandbox if that succeeded; several sandboxes make a merge queue"
		example = "  litterbox merge fix-login\n  litterbox merge fix-login --squash\n  litterbox merge fix-login docs bump-deps"
	}
	cmd := &cobra.Command{
		Use:   use + " NAME [--squash] [-- GIT-CHERRY-PICK-ARGS...]",
		Short: short,
		Long: short + `.

The reviewed commits are picked as git objects (git cherry-pick), keeping
their authorship and messages; a message is never read as a patch. Only the
commits since the last apply of this sandbox are taken, so apply, more work,
apply again (or merge) brings each change once; an apply with nothing new
says so and changes nothing. What was applied is recorded in the ref
refs/litterbox/NAME/applied; after undoing an apply on your side, delete that
ref (git update-ref -d) to take everything again. With --squash the
combined change is staged instead, for you to commit. Arguments after -- go
to git cherry-pick (--signoff, -x; not --no-commit, which is --squash).

No git hook runs during apply or merge (core.hooksPath=/dev/null), so
nothing the branch brings runs on this machine. Your identity and other git
config apply as usual. Afterwards the change made to your branch (or index)
is checked to be exactly the reviewed change; if it is not, it is undone.
Staged changes, or uncommitted changes on files the sandbox changed, are
refused first. On a conflict the repository is left in git's usual
cherry-pick state with instructions, and the sandbox is untouched.`,
		Example:           example,
		Args:              cobra.ArbitraryArgs,
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || cmd.ArgsLenAtDash() == 0 {
				return p.NameRequired(cmd, "")
			}
			if merge && cmd.ArgsLenAtDash() == -1 && len(args) > 1 {
				o.Names = args
				return runApply(cmd.Context(), p.Env, o)
			}
			var err error
			if o.Name, o.Extra, err = cli.DashArgs(cmd, args); err != nil {
				return err
			}
			o.Names = []string{o.Name}
			return runApply(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVar(&o.Squash, "squash", false, "stage the combined change instead of making commits")
	if merge {
		cmd.Use = "merge NAME... [--squash] [-- GIT-CHERRY-PICK-ARGS...]"
		cmd.Long += `

Several sandboxes (merge A B C), or one when [review] check is set, make a
merge queue. The sandboxes are taken in order: each is synced onto your
branch as the merges before it left it (litterbox sync; one that would
conflict is left as it is), the check runs inside it, and it is merged only
when the check exits 0 and changed no file git tracks, exactly the tip that
was checked; a sandbox whose branch moved past its tip when merge started
(a call, or work left uncommitted in /src) is not taken. One that conflicts or fails is left with the reason and the
queue goes on; merge then exits 1, naming what was taken and what was left.`
		cmd.Flags().BoolVarP(&o.Yes, "yes", "y", false, "merge a branch that changes files steering sandboxes or tools on this machine without asking")
	}
	return cmd
}

// runApply brings the sandbox's checked commits onto the current branch
// (and with Merge deletes the sandbox after), asking first on a terminal
// when they change files that steer this machine.
func runApply(ctx context.Context, e *cli.Env, o applyOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	if o.Merge && (len(o.Names) > 1 || m.Repo.Config.ReviewCheck != "") {
		return runQueue(ctx, e, m, o.Names, o)
	}
	cs, tip, err := m.ControlChanges(ctx, o.Name)
	if err != nil {
		return err // fail closed: a merge must know what it brings
	}
	warnChanges(e, cs)
	if o.Merge && len(cs) > 0 && !o.Yes {
		if err := confirmMerge(e, o.Name, cs); err != nil {
			return err
		}
	}
	// Exactly the commits that were checked: the agent may commit more
	// while the user answers.
	ro := review.Options{Tip: tip, Squash: o.Squash, PickArgs: o.Extra, Stdout: e.Stdout, Stderr: e.Stderr}
	var applied *review.Applied
	var deleted *sandbox.Deleted
	if o.Merge {
		applied, deleted, err = m.Merge(ctx, o.Name, ro)
	} else {
		applied, err = m.Apply(ctx, o.Name, ro)
	}
	if applied != nil {
		if applied.NothingNew {
			fmt.Fprintf(e.Stdout, "Nothing new in sandbox '%s' since it was applied at %s.\n", applied.Name, cli.ShortID(applied.Since))
		} else if applied.Squash {
			fmt.Fprintf(e.Stdout, "Staged the combined change of %d commit(s) from sandbox '%s'; review it and commit.\n", applied.Commits, applied.Name)
		} else {
			fmt.Fprintf(e.Stdout, "Applied %d commit(s) from sandbox '%s'.\n", applied.Commits, applied.Name)
		}
		if len(applied.Pointers) > 0 {
			fmt.Fprintf(e.Stdout, "Left as the LFS pointers you reviewed, their objects not being on this machine (apply fetches nothing): %s. `git lfs pull` fetches them from the LFS server your config and .lfsconfig name.\n", shownPaths(applied.Pointers, 10))
		}
	}
	if deleted != nil && err == nil {
		fmt.Fprintf(e.Stdout, "Deleted sandbox '%s' (its branch was at %s).\n", deleted.Name, deleted.BranchTip)
		cli.PrintLeftAlone(e, deleted)
	}
	var conflict *review.ConflictError
	if errors.As(err, &conflict) && o.Merge {
		return fmt.Errorf("%w; the sandbox was not deleted", err)
	}
	return err
}

// confirmMerge asks on a terminal; elsewhere a merge of such a branch needs
// --yes.
func confirmMerge(e *cli.Env, name string, cs []steering.Change) error {
	refusal := fmt.Errorf("not merged: sandbox '%s' changes %s; review them (litterbox diff %s), then: litterbox merge %s --yes", name, joinChanges(cs), name, name)
	if !cli.IsTerminal(e.Stdin) || !cli.IsTerminal(e.Stderr) {
		return refusal
	}
	fmt.Fprint(e.Stderr, "Merge anyway? [y/N] ")
	answer, _ := bufio.NewReader(e.Stdin).ReadString('\n')
	if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
		return refusal
	}
	return nil
}

// shownPaths lists paths an agent chose, escaped for the terminal, the
// first max of them and how many more.
func shownPaths(ps []string, max int) string {
	var shown []string
	for i, p := range ps {
		if i == max {
			shown = append(shown, fmt.Sprintf("and %d more", len(ps)-max))
			break
		}
		shown = append(shown, agenttext.Shown(p))
	}
	return strings.Join(shown, ", ")
}
