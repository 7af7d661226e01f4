// Package pool keeps warm sandboxes: boxes made, hardened, started and
// given the helper before any create asks for one, each waiting under a
// name of its own with its /src over the base tree of the commit its fill
// saw (empty on a provider without overlay volumes), until a create claims
// it by giving it the sandbox's name.
//
// An entry is made for one configuration: its digest (Digest) is a label,
// and a create claims only an entry whose digest is the one its own
// configuration gives, so a changed config, image or helper never gets an
// entry made for another. What cannot change after a box is made (its
// labels, hostname and environment) is told apart on a claimed box by the
// sandbox record, which names the entry (layout.Record.Pool).
package pool

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

const (
	// LabelDigest is the digest of the configuration an entry was made
	// for; a claimed sandbox keeps it.
	LabelDigest = "dev.litterbox.pool"
	// LabelVolumes lists an entry's named volumes (comma-separated), so
	// one made for an older configuration is removed whole.
	LabelVolumes = "dev.litterbox.pool-volumes"
	// Hostname is a pooled box's: its sandbox's name is not known yet.
	Hostname = "litterbox"
	// marker is in every ready entry's name and in no sandbox's: a slug
	// has no '.'; claimed, the box takes a sandbox's name and is an entry
	// no more. making is in an entry's name while it is made: never
	// claimed, renamed to the marker's once its volumes are prepared.
	marker = ".pool-"
	making = ".poolmaking-"
)

// Entry is one box waiting in the pool.
type Entry struct {
	// ID is the engine's id of the box, from the listing.
	ID      string   `json:"-"`
	Name    string   `json:"name"`
	Digest  string   `json:"digest"`
	Volumes []string `json:"volumes"`
	// Running: a box whose PID 1 ended (an engine restart, an idle stop)
	// is never claimed, only removed.
	Running bool `json:"running"`
	// Repo is the path of the repository it was made for (the
	// dev.litterbox.repo label).
	Repo string `json:"repo,omitempty"`
	// Making: the entry is being made (or its fill died making it).
	Making bool `json:"making,omitempty"`
	repoID string
}

// NewName is a new entry's name, prefix being the repository's
// ("litterbox-<repo-slug>-<repo-id>"): random, so concurrent fills never
// pick the same.
func NewName(prefix string) string {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	return prefix + marker + hex.EncodeToString(rnd[:])
}

// IsEntry reports whether a box name is a pool entry's (unclaimed, or in
// the making).
func IsEntry(name string) bool {
	return strings.Contains(name, marker) || strings.Contains(name, making)
}

// MakingName is the name an entry is made under before it is ready.
func MakingName(name string) string { return strings.Replace(name, marker, making, 1) }

// Digest is what a configuration makes of a box, spec being the box an
// entry would be (under a fixed name) and imageID the image it runs: two
// configurations with one digest make the same box.
func Digest(spec box.Spec, imageID string) string {
	data, _ := json.Marshal(struct {
		Spec  box.Spec
		Image string
	}{spec, imageID})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// Pool is the warm pool of one repository on one provider.
type Pool struct {
	P      box.Provider
	RepoID string
}

// Entries are the repository's pool entries, in the engine's order
// (newest first).
func (p Pool) Entries(ctx context.Context) ([]Entry, error) {
	list, err := p.P.List(ctx, map[string]string{hostrepo.LabelManaged: "true", hostrepo.LabelRepoID: p.RepoID}, Labels)
	if err != nil {
		return nil, err
	}
	return p.EntriesOf(list), nil
}

// Labels are the labels a listing must carry for EntriesOf to read it.
var Labels = []string{hostrepo.LabelRepoID, LabelDigest, LabelVolumes}

// EntriesOf are the repository's entries in a listing of the engine's
// boxes (made with Labels): a create reads them from the listing its
// memory budget took.
func (p Pool) EntriesOf(list []box.Summary) []Entry {
	return slices.DeleteFunc(entriesIn(list), func(e Entry) bool { return e.repoID != p.RepoID })
}

// All are the entries of every repository on the engine: a repository
// removed with entries made leaves them behind.
func All(ctx context.Context, p box.Provider) ([]Entry, error) {
	list, err := p.List(ctx, map[string]string{hostrepo.LabelManaged: "true"}, append([]string{hostrepo.LabelRepo}, Labels...))
	if err != nil {
		return nil, err
	}
	return entriesIn(list), nil
}

// entriesIn are the entries among a listing's boxes.
func entriesIn(list []box.Summary) []Entry {
	var out []Entry
	for _, s := range list {
		if !IsEntry(s.Name) || s.Labels[LabelDigest] == "" {
			continue
		}
		out = append(out, Entry{
			ID: s.ID, Name: s.Name, Digest: s.Labels[LabelDigest], Volumes: VolumesOf(s.Labels), Running: s.State == "running",
			Repo: s.Labels[hostrepo.LabelRepo], repoID: s.Labels[hostrepo.LabelRepoID], Making: strings.Contains(s.Name, making),
		})
	}
	return out
}

// VolumesOf are the volumes an entry's (or a claimed sandbox's) labels
// list, those only that are the entry's own: its name and a suffix, the
// entry's name being that of the first, its /src. A label is anyone's to
// write on a container of their own, and a removal must not reach another
// project's volumes through it.
func VolumesOf(labels map[string]string) []string {
	vols := []string{}
	list := strings.Split(labels[LabelVolumes], ",")
	entry, ok := strings.CutSuffix(list[0], "-src")
	if !ok || !strings.Contains(entry, marker) {
		return vols
	}
	for _, v := range list {
		if strings.HasPrefix(v, entry+"-") && !strings.ContainsAny(v, "/ ") {
			vols = append(vols, v)
		}
	}
	return vols
}

// Claim gives the first running entry of digest the name target, trying
// the next when another claimer took one first. It returns false when
// none was left. before, when set, runs before each attempt (the record
// names the entry's volumes before the box can take the sandbox's name).
func (p Pool) Claim(ctx context.Context, entries []Entry, digest, target string, before func(Entry) error) (Entry, bool, error) {
	c := box.PoolOf(p.P)
	for _, e := range entries {
		if e.Digest != digest || !e.Running || e.Making {
			continue
		}
		if before != nil {
			if err := before(e); err != nil {
				return Entry{}, false, err
			}
		}
		err := c.Claim(ctx, e.Name, target)
		if errors.Is(err, box.ErrNotFound) {
			continue // another create had it
		}
		if err != nil {
			return Entry{}, false, err
		}
		return e, true, nil
	}
	return Entry{}, false, nil
}

// Remove removes entry e from provider p: its box, then its volumes. It
// returns what it could not remove.
func Remove(ctx context.Context, p box.Provider, e Entry) []string {
	var left []string
	if err := p.Remove(ctx, e.Name); err != nil && !errors.Is(err, box.ErrNotFound) {
		return []string{"container " + e.Name}
	}
	for _, v := range e.Volumes {
		if err := p.RemoveVolume(ctx, v); err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
			left = append(left, "volume "+v)
		}
	}
	return left
}

// Split divides entries into those of digest that can be claimed and the
// rest (another configuration's, stopped, or still being made), which are
// only removed, by a fill that holds the fill lock: an entry in the making
// it finds is a dead fill's.
func Split(entries []Entry, digest string) (ready, stale []Entry) {
	for _, e := range entries {
		if e.Digest == digest && e.Running && !e.Making {
			ready = append(ready, e)
		} else {
			stale = append(stale, e)
		}
	}
	return ready, stale
}

// VolumesLabel is the LabelVolumes value for these volumes.
func VolumesLabel(vols []box.Mount) string {
	names := make([]string, len(vols))
	for i, v := range vols {
		names[i] = v.Volume
	}
	return strings.Join(names, ",")
}
