package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/review"
)

// appliedRef records the sandbox commit the last apply ended at, so the
// next apply or merge takes only what came after it. Under
// refs/litterbox/<slug>/, so delete removes it with the sandbox's other refs.
func appliedRef(slug string) string { return "refs/litterbox/" + slug + "/applied" }

// Diff shows base..branch with extra git diff arguments (--stat, paths),
// after a note on stderr of what an earlier apply already took.
func (m *Manager) Diff(ctx context.Context, name string, extra []string, stdout, stderr io.Writer) error {
	w, err := m.work(ctx, name)
	if err != nil {
		return err
	}
	m.noteApplied(ctx, w, stderr)
	return review.Diff(ctx, m.Repo.Git, w, extra, stdout, stderr)
}

// Log shows the sandbox's commits since its base; patch adds each diff.
func (m *Manager) Log(ctx context.Context, name string, patch bool, extra []string, stdout, stderr io.Writer) error {
	w, err := m.work(ctx, name)
	if err != nil {
		return err
	}
	m.noteApplied(ctx, w, stderr)
	return review.Log(ctx, m.Repo.Git, w, patch, extra, stdout, stderr)
}

// noteApplied tells the reviewer which part of base..tip was applied
// already. The diff itself stays base..tip: the whole work, as merge's
// delete will leave it.
func (m *Manager) noteApplied(ctx context.Context, w review.Work, stderr io.Writer) {
	note, err := review.AlreadyApplied(ctx, m.Repo.Git, w)
	if err != nil {
		fmt.Fprintf(stderr, "Note: cannot tell what of sandbox '%s' was applied already: %v\n", w.Name, err)
		return
	}
	if note != "" {
		fmt.Fprintf(stderr, "Note: %s.\n", note)
	}
}

// Apply brings the sandbox's commits since the last apply onto the current
// branch (see review.Apply). The sandbox stays. It holds the sandbox for
// its whole run, as a call does, and commits first what /src holds that no
// call committed (a background process's writes): what it takes is the
// branch as it stands with nothing of the sandbox's left out, and, when o
// names the tip that was reviewed, exactly that tip.
func (m *Manager) Apply(ctx context.Context, name string, o review.Options) (*review.Applied, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, err
	}
	unlock, err := m.Repo.Lock(layout.WithCall(ctx, "apply"), slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := m.commitFirst(ctx, slug, false); err != nil {
		return nil, err
	}
	return m.applyHeld(ctx, slug, o)
}

// applyHeld is Apply with the sandbox's lock held and /src committed.
func (m *Manager) applyHeld(ctx context.Context, slug string, o review.Options) (*review.Applied, error) {
	w, err := m.work(ctx, slug)
	if err != nil {
		return nil, err
	}
	if o.Tip != "" && o.Tip != w.Tip {
		return nil, fmt.Errorf("not applied: litterbox/%s moved from %s to %s since it was reviewed; review it again", w.Name, hostrepo.ShortID(o.Tip), hostrepo.ShortID(w.Tip))
	}
	applied, err := review.Apply(ctx, m.Repo.Git, w, o)
	if err == nil {
		m.markTaken(slug, w.Tip)
	}
	return applied, err
}

// commitFirst commits what the sandbox's /src holds that no call committed,
// with the lock held. A sandbox that does not run (paused, stopped, its
// container gone) has nothing new to commit; for a merge, which deletes
// /src, any other failure to look stops it, as an apply need not.
func (m *Manager) commitFirst(ctx context.Context, slug string, merge bool) error {
	_, err := m.Agent.ActLocked(ctx, slug, agent.Action{Op: protocol.OpScan, Message: hostrepo.CommitMessage("changed since the last call", "committed before apply")})
	var nr *agent.NotRunningError
	switch {
	case err == nil, errors.As(err, &nr), errors.Is(err, box.ErrNotFound), errors.Is(err, hostrepo.ErrMissing):
		return nil
	case merge:
		return fmt.Errorf("not merged: committing what sandbox '%s' holds first failed, and merge would delete it: %w", slug, err)
	}
	return nil
}

func (m *Manager) work(ctx context.Context, name string) (review.Work, error) {
	slug, base, tip, err := m.Repo.BaseAndTip(ctx, name)
	if err != nil {
		return review.Work{}, err
	}
	w := review.Work{Name: slug, Base: base, Tip: tip, AppliedRef: appliedRef(slug)}
	w.Applied, err = m.Repo.Git.RevParse(ctx, w.AppliedRef)
	return w, err
}

// Merge applies the sandbox's work and, only if that succeeded, deletes the
// sandbox.
func (m *Manager) Merge(ctx context.Context, name string, o review.Options) (*review.Applied, *Deleted, error) {
	// The delete needs the engine: without it, stop before applying rather
	// than apply and then fail half-way.
	if slug, err := m.Repo.Resolve(name); err == nil {
		if _, err := m.Repo.Box(slug).Inspect(ctx); err != nil && !errors.Is(err, box.ErrNotFound) {
			return nil, nil, fmt.Errorf("merging sandbox '%s': %w", slug, err)
		}
	}
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, nil, err
	}
	// The sandbox is held from the first look to the delete: a call that
	// would land meanwhile waits, and then finds the sandbox gone, instead
	// of committing work that the delete would take with the branch.
	unlock, err := m.Repo.Lock(layout.WithCall(ctx, "merge"), slug)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	if err := m.commitFirst(ctx, slug, true); err != nil {
		return nil, nil, err
	}
	a, err := m.applyHeld(ctx, slug, o)
	if err != nil {
		return nil, nil, err
	}
	// The branch's files are in the work tree now: deleting the refs must
	// not run a reference-transaction hook they bring (core.hooksPath).
	d, err := m.deleteHeld(ctx, slug, true, review.Sealed(m.Repo.Git), a.Tip)
	return a, d, err
}
