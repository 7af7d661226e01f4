package setupcache

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// RepoEntry is a setup cache entry of any repository on the engine, found
// by its volume's labels: the record in that repository's git dir when it
// is still there, the volume alone when the repository is gone.
type RepoEntry struct {
	Entry
	Repo string `json:"repo"`
	// RepoGone: no directory is left at Repo, so nothing will use the
	// entry again.
	RepoGone bool `json:"repo_gone,omitempty"`
	// Known: the repository's record of the entry was read (its size,
	// files and hits are known).
	Known bool `json:"known"`
}

// ListAll returns the setup cache entries of every repository on the
// engine, those of repositories that are gone first, then by repository
// and newest first.
func ListAll(ctx context.Context, p box.Provider) ([]RepoEntry, error) {
	vols, err := p.Volumes(ctx, map[string]string{hostrepo.LabelManaged: role})
	if err != nil {
		return nil, err
	}
	out := []RepoEntry{}
	for _, v := range vols {
		labels, err := p.VolumeLabels(ctx, v)
		if errors.Is(err, box.ErrNoSuchVolume) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		out = append(out, entryOf(v, labels))
	}
	slices.SortFunc(out, func(a, b RepoEntry) int {
		if a.RepoGone != b.RepoGone {
			if a.RepoGone {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Repo, b.Repo), b.Created.Compare(a.Created))
	})
	return out, nil
}

// entryOf is volume v's entry: its record in the repository the labels
// name when that repository holds one for it.
func entryOf(v string, labels map[string]string) RepoEntry {
	repo, key := labels[hostrepo.LabelRepo], labels[LabelKey]
	e := RepoEntry{Entry: Entry{Key: key, Volume: v, State: cacheReady}, Repo: repo}
	// Gone only when nothing is there: a repository this user cannot
	// reach now (another's home, an unmounted disk) may still be.
	if _, err := os.Stat(repo); errors.Is(err, fs.ErrNotExist) {
		e.RepoGone = true
		return e
	}
	data, err := os.ReadFile(layout.New(filepath.Join(repo, ".git")).CacheEntry(key))
	var rec Entry
	if err == nil && json.Unmarshal(data, &rec) == nil && rec.Volume == v {
		e.Entry, e.Known = rec, true
	}
	return e
}

// PruneGone removes the entries of repositories that are gone: no create
// can use them again. One that a sandbox's /src still lies over (a
// sandbox the repository's removal left on the engine) stays until that
// sandbox's volume goes. Entries of repositories still there are theirs
// to prune (litterbox cache prune, in each).
func PruneGone(ctx context.Context, p box.Provider) ([]RepoEntry, error) {
	all, err := ListAll(ctx, p)
	if err != nil {
		return nil, err
	}
	var removed []RepoEntry
	for _, e := range all {
		if !e.RepoGone {
			continue
		}
		if over, err := p.Volumes(ctx, map[string]string{LabelLayer: e.Volume}); err != nil || len(over) > 0 {
			continue
		}
		if err := p.RemoveVolume(ctx, e.Volume); err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
			return removed, fmt.Errorf("removing setup cache volume %s: %w", e.Volume, err)
		}
		removed = append(removed, e)
	}
	return removed, nil
}

// Totals sums entries for a summary line: how many, the bytes of those
// whose size is known, and how many belong to repositories that are gone.
func Totals(entries []RepoEntry) (n int, bytes int64, gone int) {
	for _, e := range entries {
		n++
		bytes += e.Bytes
		if e.RepoGone {
			gone++
		}
	}
	return n, bytes, gone
}
