package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
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
	return review.Diff(ctx, m.Git, w, extra, stdout, stderr)
}

// Log shows the sandbox's commits since its base; patch adds each diff.
func (m *Manager) Log(ctx context.Context, name string, patch bool, extra []string, stdout, stderr io.Writer) error {
	w, err := m.work(ctx, name)
	if err != nil {
		return err
	}
	m.noteApplied(ctx, w, stderr)
	return review.Log(ctx, m.Git, w, patch, extra, stdout, stderr)
}

// noteApplied tells the reviewer which part of base..tip was applied
// already. The diff itself stays base..tip: the whole work, as merge's
// delete will leave it.
func (m *Manager) noteApplied(ctx context.Context, w review.Work, stderr io.Writer) {
	note, err := review.AlreadyApplied(ctx, m.Git, w)
	if err != nil {
		fmt.Fprintf(stderr, "Note: cannot tell what of sandbox '%s' was applied already: %v\n", w.Name, err)
		return
	}
	if note != "" {
		fmt.Fprintf(stderr, "Note: %s.\n", note)
	}
}

// Apply brings the sandbox's commits since the last apply onto the current
// branch (see review.Apply). The sandbox stays.
func (m *Manager) Apply(ctx context.Context, name string, o review.Options) (*review.Applied, error) {
	w, err := m.work(ctx, name)
	if err != nil {
		return nil, err
	}
	if o.Tip != "" && o.Tip != w.Tip {
		return nil, fmt.Errorf("not applied: litterbox/%s moved from %s to %s since it was reviewed; review it again", w.Name, hostrepo.ShortID(o.Tip), hostrepo.ShortID(w.Tip))
	}
	return review.Apply(ctx, m.Git, w, o)
}

func (m *Manager) work(ctx context.Context, name string) (review.Work, error) {
	slug, base, tip, err := m.BaseAndTip(ctx, name)
	if err != nil {
		return review.Work{}, err
	}
	w := review.Work{Name: slug, Base: base, Tip: tip, AppliedRef: appliedRef(slug)}
	w.Applied, err = m.Git.RevParse(ctx, w.AppliedRef)
	return w, err
}

// Merge applies the sandbox's work and, only if that succeeded, deletes the
// sandbox.
func (m *Manager) Merge(ctx context.Context, name string, o review.Options) (*review.Applied, *Deleted, error) {
	// The delete needs the engine: without it, stop before applying rather
	// than apply and then fail half-way.
	if slug, err := m.Resolve(name); err == nil {
		if _, err := m.Box(slug).Inspect(ctx); err != nil && !errors.Is(err, box.ErrNotFound) {
			return nil, nil, fmt.Errorf("merging sandbox '%s': %w", slug, err)
		}
	}
	a, err := m.Apply(ctx, name, o)
	if err != nil {
		return nil, nil, err
	}
	// The branch's files are in the work tree now: deleting the refs must
	// not run a reference-transaction hook they bring (core.hooksPath).
	d, err := m.delete(ctx, name, true, review.Sealed(m.Git))
	return a, d, err
}
