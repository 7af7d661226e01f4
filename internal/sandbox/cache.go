package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// roleCache is the dev.litterbox.managed label of a setup cache volume.
const roleCache = "cache"

// LabelCacheKey labels a setup cache volume with its key.
const LabelCacheKey = "dev.litterbox.cache-key"

// CacheEntry is one kept setup result: a volume holding what the setup
// command added to /src (the base's tracked files left out), and the
// record of how it was made. Entries live in the repository's git dir and
// its own engine volumes: no other repository ever sees one.
type CacheEntry struct {
	Key     string    `json:"key"`
	Volume  string    `json:"volume"`
	Image   string    `json:"image"`
	ImageID string    `json:"image_id"`
	Setup   string    `json:"setup"`
	Inputs  []string  `json:"inputs"` // the [setup] inputs, or empty: the whole tree
	Base    string    `json:"base"`   // the commit of the sandbox it was made in
	From    string    `json:"from"`   // that sandbox
	Created time.Time `json:"created"`
	Used    time.Time `json:"used,omitempty"`
	Hits    int       `json:"hits"`
	Files   int       `json:"files"`
	Bytes   int64     `json:"bytes"`
	// State is "saving" while the first create copies it, then "ready".
	State string `json:"state"`
	PID   int    `json:"pid,omitempty"`
}

const (
	cacheSaving = "saving"
	cacheReady  = "ready"
)

// cacheVolume names a key's volume. The '.' keeps it apart from every
// sandbox's resources, whose names are slugs.
func (m *Manager) cacheVolume(key string) string {
	return "litterbox-" + m.RepoSlug + "-" + m.RepoID + ".cache-" + key[:16]
}

// cacheable says whether a create with cfg may use the setup cache.
func cacheable(cfg config.Config) bool {
	return cfg.SetupCache && cfg.SetupCommand != config.DefaultSetup && strings.TrimSpace(cfg.SetupCommand) != ""
}

// cacheKey is what a setup's result depends on: this repository, the
// image's content (imageID, as preflight found it), the command, the user
// and environment it runs with, its network, and the files it reads (the
// [setup] inputs' blobs at base, or base's whole tree).
func (m *Manager) cacheKey(ctx context.Context, cfg config.Config, imageID, base string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "litterbox setup cache v1\x00repo %s\x00image %s\x00setup %s\x00user %s\x00network %s %v %v\x00",
		m.RepoID, imageID, cfg.SetupCommand, cfg.User, cfg.Network, cfg.SetupOpen, cfg.SetupAllow)
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		fmt.Fprintf(h, "env %s=%s\x00", k, cfg.Env[k])
	}
	// Secrets by name: a value never reaches a key or a record.
	for _, k := range slices.Sorted(maps.Keys(cfg.Secrets)) {
		fmt.Fprintf(h, "secret %s %s\x00", k, cfg.Secrets[k])
	}
	if len(cfg.SetupInputs) == 0 {
		tree, err := m.Git.RevParse(ctx, base+"^{tree}")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "tree %s\x00", tree)
	} else {
		// A named input missing at base counts as missing: adding it
		// later changes the key.
		out, err := m.Git.Output(ctx, append([]string{"ls-tree", "-r", "-z", base, "--"}, cfg.SetupInputs...)...)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "inputs %q\x00%s\x00", cfg.SetupInputs, out)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// cacheLookup returns the ready entry of key whose volume is there and
// ours, or nil.
func (m *Manager) cacheLookup(ctx context.Context, key string) *CacheEntry {
	e, err := m.loadCacheEntry(key)
	if err != nil || e == nil || e.State != cacheReady {
		return nil
	}
	labels, err := m.Provider.VolumeLabels(ctx, e.Volume)
	if errors.Is(err, box.ErrNoSuchVolume) {
		// Removed behind our back (docker volume prune): the record goes
		// too, so this create keeps a new entry.
		os.Remove(m.Layout().CacheEntry(key))
		return nil
	}
	if err != nil || labels[hostrepo.LabelRepoID] != m.RepoID || labels[LabelCacheKey] != key {
		return nil
	}
	return e
}

func (m *Manager) loadCacheEntry(key string) (*CacheEntry, error) {
	data, err := os.ReadFile(m.Layout().CacheEntry(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var e CacheEntry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", m.Layout().CacheEntry(key), err)
	}
	return &e, nil
}

// cacheRestore fills the new sandbox's /src from entry e.
func (m *Manager) cacheRestore(ctx context.Context, n hostrepo.Names, image string, e *CacheEntry) error {
	if _, err := m.copyVolume(ctx, image, copyJob{sandbox: n.Container, volume: e.Volume, intoSandbox: true}); err != nil {
		return err
	}
	e.Used, e.Hits = m.Now().UTC(), e.Hits+1
	_ = layout.WriteFileAtomic(m.Layout().CacheEntry(e.Key), layout.JSON(e))
	return nil
}

// cacheSave keeps what the setup command added to the sandbox's /src as
// the entry of key. Two creates that miss at once race for the record
// file; the loser leaves the saving to the winner. A failure costs the
// cache, never the sandbox: it comes back as a warning.
func (m *Manager) cacheSave(ctx context.Context, n hostrepo.Names, cfg config.Config, key, imageID, base string) (*CacheEntry, error) {
	if err := os.MkdirAll(m.Layout().Cache(), 0o755); err != nil {
		return nil, err
	}
	inputs := cfg.SetupInputs
	if inputs == nil {
		inputs = []string{} // the record says [], not null
	}
	e := &CacheEntry{
		Key: key, Volume: m.cacheVolume(key), Image: cfg.Image, ImageID: imageID, Setup: m.Secrets.Seen().Redact(cfg.SetupCommand),
		Inputs: inputs, Base: base, From: n.Slug, Created: m.Now().UTC(), State: cacheSaving, PID: os.Getpid(),
	}
	f, err := os.OpenFile(m.Layout().CacheEntry(key), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		old, lerr := m.loadCacheEntry(key)
		if lerr != nil || old == nil || old.State == cacheReady || hostrepo.ProcessAlive(old.PID) {
			return nil, nil
		}
		// A save that died half-way: start over.
		_ = m.Provider.RemoveVolume(ctx, old.Volume)
		if err := layout.WriteFileAtomic(m.Layout().CacheEntry(key), layout.JSON(e)); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	} else {
		_, err = f.Write(layout.JSON(e))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(m.Layout().CacheEntry(key))
			return nil, err
		}
	}
	fail := func(err error) (*CacheEntry, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = m.Provider.RemoveVolume(ctx, e.Volume)
		os.Remove(m.Layout().CacheEntry(key))
		return nil, err
	}
	tracked, err := m.Git.Output(ctx, "ls-tree", "-r", "-z", "--name-only", base)
	if err != nil {
		return fail(err)
	}
	labels := m.Labels("", roleCache)
	labels[LabelCacheKey] = key
	if err := m.Provider.CreateVolume(ctx, e.Volume, labels); err != nil {
		return fail(err)
	}
	st, err := m.copyVolume(ctx, cfg.Image, copyJob{sandbox: n.Container, volume: e.Volume, skip: strings.NewReader(tracked)})
	if err != nil {
		return fail(err)
	}
	e.Files, e.Bytes, e.State, e.PID = st.Files, st.Bytes, cacheReady, 0
	if err := layout.WriteFileAtomic(m.Layout().CacheEntry(key), layout.JSON(e)); err != nil {
		return fail(err)
	}
	return e, nil
}

// CacheList returns this repository's setup cache entries, newest first,
// each checked against the engine: an entry whose volume is gone is
// dropped.
func (m *Manager) CacheList(ctx context.Context) ([]CacheEntry, error) {
	entries, err := m.cacheEntries()
	if err != nil {
		return nil, err
	}
	vols, err := m.Provider.Volumes(ctx, map[string]string{hostrepo.LabelManaged: roleCache, hostrepo.LabelRepoID: m.RepoID})
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, v := range vols {
		have[v] = true
	}
	out := []CacheEntry{}
	for _, e := range entries {
		if !have[e.Volume] && e.State == cacheReady {
			os.Remove(m.Layout().CacheEntry(e.Key))
			continue
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b CacheEntry) int { return b.Created.Compare(a.Created) })
	return out, nil
}

func (m *Manager) cacheEntries() ([]CacheEntry, error) {
	names, err := os.ReadDir(m.Layout().Cache())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []CacheEntry
	for _, d := range names {
		key, ok := strings.CutSuffix(d.Name(), ".json")
		if !ok || strings.HasPrefix(key, ".") {
			continue
		}
		e, err := m.loadCacheEntry(key)
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, *e)
		}
	}
	return out, nil
}

// CacheRemove removes the entries whose key starts with prefix (at least
// 4 characters, as `cache ls` shows 12). An entry a create is copying from
// at this moment stays: the engine refuses to remove a volume in use.
func (m *Manager) CacheRemove(ctx context.Context, prefix string) ([]CacheEntry, error) {
	if len(prefix) < 4 {
		return nil, fmt.Errorf("cache key %q: give at least 4 characters of a key `litterbox cache ls` shows", prefix)
	}
	entries, err := m.cacheEntries()
	if err != nil {
		return nil, err
	}
	var match []CacheEntry
	for _, e := range entries {
		if strings.HasPrefix(e.Key, prefix) {
			match = append(match, e)
		}
	}
	switch {
	case len(match) == 0:
		return nil, fmt.Errorf("no setup cache entry has a key starting with %q; `litterbox cache ls` lists them", prefix)
	case len(match) > 1:
		return nil, fmt.Errorf("%d setup cache entries have a key starting with %q; give more of it", len(match), prefix)
	}
	return match, m.removeCacheEntry(ctx, match[0])
}

func (m *Manager) removeCacheEntry(ctx context.Context, e CacheEntry) error {
	if err := m.Provider.RemoveVolume(ctx, e.Volume); err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
		return fmt.Errorf("removing setup cache volume %s: %w", e.Volume, err)
	}
	if err := os.Remove(m.Layout().CacheEntry(e.Key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// CachePrune removes every entry a create with the current configuration
// from HEAD would not use (another image, setup command or inputs), and
// entries left half-saved by a create that died.
func (m *Manager) CachePrune(ctx context.Context) ([]CacheEntry, error) {
	keep := ""
	if cfg, err := m.CreateConfig(); err == nil && cacheable(cfg) {
		head, herr := m.Git.ResolveCommit(ctx, "HEAD")
		if cfg.Build != nil && herr == nil {
			cfg.Image, err = m.images().ProjectTag(ctx, cfg, head)
		}
		info, ierr := box.Images(m.Provider).Image(ctx, cfg.Image)
		if err == nil && herr == nil && ierr == nil {
			keep, _ = m.cacheKey(ctx, cfg, info.ID, head)
		}
	}
	entries, err := m.cacheEntries()
	if err != nil {
		return nil, err
	}
	var removed []CacheEntry
	for _, e := range entries {
		if e.Key == keep || e.State == cacheSaving && hostrepo.ProcessAlive(e.PID) {
			continue
		}
		if err := m.removeCacheEntry(ctx, e); err != nil {
			return removed, err
		}
		removed = append(removed, e)
	}
	return removed, nil
}
