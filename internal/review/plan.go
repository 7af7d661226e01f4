package review

import (
	"context"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
)

// Plan is what an apply takes: the commits after From up to the tip.
type Plan struct {
	// From is the commit whose tree the host already has from this
	// sandbox: the base, or the branch's newest commit with the tree of the
	// previous apply's tip (or that applied commit itself, with Across).
	From    string
	Commits int
	// Across: a milestone squashed the branch across the applied point, so
	// no commit on it has the applied tree; the rest of the change goes as
	// one commit made on the applied commit (see combined).
	Across bool
}

// commitTree is one commit of the branch and its tree.
type commitTree struct{ ID, Tree string }

// resumeIndex is where an incremental apply resumes in commits (base..tip,
// oldest first): the index of the newest commit whose tree is the applied
// tree, or -1. Trees, not commit ids: a milestone rewrites the commits but
// keeps the tree each milestone ends at, and when the agent went back to an
// applied state later, the newest such commit leaves the least to take.
func resumeIndex(commits []commitTree, appliedTree string) int {
	for i := len(commits) - 1; i >= 0; i-- {
		if commits[i].Tree == appliedTree {
			return i
		}
	}
	return -1
}

// plan finds the commits of w that the host has not taken yet.
func plan(ctx context.Context, g *gitcli.Client, w Work) (Plan, error) {
	if w.Applied == "" {
		n, err := g.Count(ctx, w.Base, w.Tip)
		return Plan{From: w.Base, Commits: n}, err
	}
	trees, err := g.Output(ctx, "rev-parse", w.Applied+"^{tree}", w.Tip+"^{tree}")
	if err != nil {
		return Plan{}, fmt.Errorf("reading what was applied from sandbox '%s': %w", w.Name, err)
	}
	appliedTree, tipTree, _ := strings.Cut(trees, "\n")
	if appliedTree == tipTree {
		return Plan{From: w.Tip}, nil
	}
	commits, err := branchTrees(ctx, g, w.Base, w.Tip)
	if err != nil {
		return Plan{}, err
	}
	if i := resumeIndex(commits, appliedTree); i >= 0 {
		return Plan{From: commits[i].ID, Commits: len(commits) - 1 - i}, nil
	}
	return Plan{From: w.Applied, Commits: 1, Across: true}, nil
}

// branchTrees lists base..tip, oldest first, with each commit's tree.
func branchTrees(ctx context.Context, g *gitcli.Client, base, tip string) ([]commitTree, error) {
	out, err := g.Output(ctx, "rev-list", "--reverse", "--no-commit-header", "--format=%H %T", base+".."+tip)
	if err != nil {
		return nil, err
	}
	var commits []commitTree
	for _, line := range strings.Split(out, "\n") {
		if id, tree, ok := strings.Cut(line, " "); ok {
			commits = append(commits, commitTree{ID: id, Tree: tree})
		}
	}
	return commits, nil
}

// combined makes one commit object with the tip's tree on parent, with the
// tip's author and message (a milestone's): the whole change from parent
// to the tip, to be picked as one.
func combined(ctx context.Context, g *gitcli.Client, w Work, parent string) (string, error) {
	out, err := g.Output(ctx, "show", "-s", "--no-show-signature", "--format=%T%x00%an%x00%ae%x00%B", w.Tip)
	if err != nil {
		return "", err
	}
	f := strings.SplitN(out, "\x00", 4)
	if len(f) != 4 {
		return "", fmt.Errorf("cannot read commit %s of sandbox '%s'", w.Tip, w.Name)
	}
	return g.CommitTree(ctx, gitcli.CommitSpec{Tree: f[0], Parents: []string{parent}, Message: f[3] + "\n", Author: gitcli.Ident{Name: f[1], Email: f[2]}})
}

// recordApplied moves the sandbox's applied ref to the tip just applied
// (from the previous one, so two applies racing cannot both record).
func recordApplied(ctx context.Context, g *gitcli.Client, w Work) error {
	if w.AppliedRef == "" {
		return nil
	}
	if err := g.UpdateRef(ctx, w.AppliedRef, w.Tip, w.Applied, "litterbox: applied "+w.Name); err != nil {
		return fmt.Errorf("not applied: recording the apply of sandbox '%s' in %s failed: %w", w.Name, w.AppliedRef, err)
	}
	return nil
}

// AlreadyApplied says, for diff and log, which part of base..tip an earlier
// apply took: "" when none, else a note for the user.
func AlreadyApplied(ctx context.Context, g *gitcli.Client, w Work) (string, error) {
	if w.Applied == "" {
		return "", nil
	}
	p, err := plan(ctx, g, w)
	if err != nil {
		return "", err
	}
	if p.Commits == 0 {
		return fmt.Sprintf("all of sandbox '%s' was applied (at %s); nothing new to apply", w.Name, abbrev(w.Applied)), nil
	}
	return fmt.Sprintf("sandbox '%s' was applied up to %s; apply takes only the %d commit(s) after it (%s..%s)", w.Name, abbrev(w.Applied), p.Commits, abbrev(p.From), abbrev(w.Tip)), nil
}

func abbrev(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// A pick may end out of Litterbox's sight: stopped on a conflict, which the
// user finishes (or abandons) with git itself, or killed half-way. So
// before git starts, the pick's last commit is kept in a pending ref next
// to the applied one, removed once the apply is recorded (or undone), and
// the next apply settles one it finds: if the user's branch now holds that
// commit's pick, the apply was finished and is recorded; if not, it was
// aborted (or redone by hand) and nothing is recorded. Without this,
// finishing a conflicted pick, or an apply killed before it recorded, and
// applying again would pick every commit a second time.

// pendingRef is the ref that holds the last commit of a stopped pick.
func pendingRef(w Work) string { return w.AppliedRef + "-pending" }

// notePending records, before a pick starts, its last commit: until the
// apply records where it got to, this is how the next apply knows of it.
func notePending(ctx context.Context, g *gitcli.Client, w Work, last string) error {
	if w.AppliedRef == "" {
		return nil
	}
	return g.UpdateRef(ctx, pendingRef(w), last, "", "litterbox: apply of "+w.Name+" under way")
}

// clearPending removes the pending ref of a pick that was recorded, or that
// changed nothing; left behind, the next apply settles it all the same.
func clearPending(ctx context.Context, g *gitcli.Client, w Work) {
	if w.AppliedRef != "" {
		_ = g.DeleteRef(context.WithoutCancel(ctx), pendingRef(w), "")
	}
}

// settlePending settles the pending ref of an earlier stopped pick (see
// above), moving w.Applied when that pick was finished.
func settlePending(ctx context.Context, g *gitcli.Client, w *Work) error {
	if w.AppliedRef == "" {
		return nil
	}
	ref := pendingRef(*w)
	pending, err := g.RevParse(ctx, ref)
	if err != nil || pending == "" {
		return err
	}
	done, err := picked(ctx, g, pending)
	if err != nil {
		return err
	}
	if done {
		if err := g.UpdateRef(ctx, w.AppliedRef, pending, w.Applied, "litterbox: applied "+w.Name+" after a conflict"); err != nil {
			return fmt.Errorf("recording the finished apply of sandbox '%s' in %s: %w", w.Name, w.AppliedRef, err)
		}
		w.Applied = pending
	}
	return g.DeleteRef(ctx, ref, pending)
}

// pickWindow is how far back in the current branch settlePending looks for
// the pick of a pending commit: the user may have committed after it.
const pickWindow = 500

// picked reports whether the current branch's last pickWindow commits hold
// a pick of commit c: cherry-pick keeps the author, the author date and the
// message, and makes the user the committer.
func picked(ctx context.Context, g *gitcli.Client, c string) (bool, error) {
	const format = "--format=%an%x00%ae%x00%at%x00%s"
	want, err := g.Output(ctx, "log", "-1", format, c)
	if err != nil {
		return false, err
	}
	have, err := g.Output(ctx, "log", "-n", fmt.Sprint(pickWindow), format, "HEAD")
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(have, "\n") {
		if line == want {
			return true, nil
		}
	}
	return false, nil
}
