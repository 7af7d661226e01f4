// Package forecast tells, before anything is merged, how each sandbox's
// work would meet the branch it is taken onto and the other sandboxes'
// work: how far that branch has gone since the sandbox's base, whether the
// work merges cleanly onto it, which other sandboxes change the same
// files, and which of those would conflict with it. Everything is read
// from git objects (git merge-tree --write-tree writes only objects, never
// the work tree, the index or a ref), and what a pair of commits gives is
// cached by their ids, which never change meaning.
package forecast

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
)

// Work is one sandbox's branch: its base commit and its tip.
type Work struct{ Name, Base, Tip string }

// Forecast is how one sandbox's work meets the target and the others'.
type Forecast struct {
	// Onto is the branch (or commit) the work would be taken onto: the
	// host's HEAD, as apply and merge take it.
	Onto string `json:"onto"`
	// Behind counts the target's commits since the sandbox's base.
	Behind int `json:"behind"`
	// Clean: the work merges onto the target with no conflict; Conflicts
	// names the files that would conflict when it does not.
	Clean     bool     `json:"clean"`
	Conflicts []string `json:"conflicts,omitempty"`
	// Overlaps names the other sandboxes whose work changes a file this
	// one's changes, and ConflictsWith those of them whose work would
	// conflict with this one's.
	Overlaps      []string `json:"overlaps,omitempty"`
	ConflictsWith []string `json:"conflicts_with,omitempty"`
}

// Teller computes forecasts with one repository's git and a cache.
type Teller struct {
	Git   *gitcli.Client
	Cache *Cache
}

// Tell forecasts each work against target (a commit) and each other.
func (t *Teller) Tell(ctx context.Context, target string, works []Work) (map[string]Forecast, error) {
	out := make(map[string]Forecast, len(works))
	files := make(map[string][]string, len(works))
	for _, w := range works {
		f, err := t.changed(ctx, w.Base, w.Tip)
		if err != nil {
			return nil, fmt.Errorf("the files sandbox '%s' changes: %w", w.Name, err)
		}
		files[w.Name] = f
		fc, err := t.ontoTarget(ctx, target, w, f)
		if err != nil {
			return nil, fmt.Errorf("forecasting sandbox '%s' onto the branch: %w", w.Name, err)
		}
		out[w.Name] = fc
	}
	for i, a := range works {
		for _, b := range works[i+1:] {
			if !intersect(files[a.Name], files[b.Name]) {
				continue
			}
			conflicts, err := t.merge(ctx, a.Tip, b.Tip)
			if err != nil {
				return nil, fmt.Errorf("forecasting sandboxes '%s' and '%s': %w", a.Name, b.Name, err)
			}
			fa, fb := out[a.Name], out[b.Name]
			fa.Overlaps, fb.Overlaps = append(fa.Overlaps, b.Name), append(fb.Overlaps, a.Name)
			if len(conflicts) > 0 {
				fa.ConflictsWith, fb.ConflictsWith = append(fa.ConflictsWith, b.Name), append(fb.ConflictsWith, a.Name)
			}
			out[a.Name], out[b.Name] = fa, fb
		}
	}
	return out, nil
}

// ontoTarget is how work w meets target: how far target is ahead of the
// base, and whether the work merges onto it. Work whose files the target
// has not touched since the base merges cleanly without a merge.
func (t *Teller) ontoTarget(ctx context.Context, target string, w Work, files []string) (Forecast, error) {
	behind, err := t.behind(ctx, w.Base, target)
	if err != nil {
		return Forecast{}, err
	}
	if behind == 0 {
		return Forecast{Clean: true}, nil
	}
	moved, err := t.changed(ctx, w.Base, target)
	if err != nil {
		return Forecast{}, err
	}
	if !intersect(files, moved) {
		return Forecast{Behind: behind, Clean: true}, nil
	}
	conflicts, err := t.merge(ctx, target, w.Tip)
	return Forecast{Behind: behind, Clean: len(conflicts) == 0, Conflicts: conflicts}, err
}

// changed is the files that differ between commits from and to.
func (t *Teller) changed(ctx context.Context, from, to string) ([]string, error) {
	key := "changed " + from + " " + to
	if v, ok := t.Cache.get(key); ok {
		return v, nil
	}
	out, err := t.Git.Output(ctx, "diff-tree", "-r", "-z", "--name-only", "--no-renames", "--no-textconv", "--no-ext-diff", from, to)
	if err != nil {
		return nil, err
	}
	files := gitcli.SplitNUL(out)
	slices.Sort(files)
	t.Cache.put(key, files)
	return files, nil
}

// behind counts the commits of target that base lacks.
func (t *Teller) behind(ctx context.Context, base, target string) (int, error) {
	key := "behind " + base + " " + target
	if v, ok := t.Cache.get(key); ok && len(v) == 1 {
		return strconv.Atoi(v[0])
	}
	out, err := t.Git.Output(ctx, "rev-list", "--count", base+".."+target)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(out))
	if err == nil {
		t.Cache.put(key, []string{strconv.Itoa(n)})
	}
	return n, err
}

// merge merges commits a and b as git merge-tree does, which writes only
// objects, and returns the files that conflict (none: it merges cleanly).
func (t *Teller) merge(ctx context.Context, a, b string) ([]string, error) {
	if b < a {
		a, b = b, a
	}
	key := "merge " + a + " " + b
	if v, ok := t.Cache.get(key); ok {
		return v, nil
	}
	_, files, err := t.Git.MergeTree(ctx, a, b)
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	files = slices.Compact(files)
	if files == nil {
		files = []string{}
	}
	t.Cache.put(key, files)
	return files, nil
}

// intersect reports whether sorted a and b share a name.
func intersect(a, b []string) bool {
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			return true
		case c < 0:
			i++
		default:
			j++
		}
	}
	return false
}
