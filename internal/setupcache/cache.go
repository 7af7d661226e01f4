package setupcache

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
	"github.com/litterbox-dev/litterbox/internal/volcopy"
)

// role is the dev.litterbox.managed label of a setup cache volume.
const role = "cache"

// LabelKey labels a setup cache volume with its key.
const LabelKey = "dev.litterbox.cache-key"

// LabelLayer labels a sandbox's /src volume made over an entry (its
// src/ a layer between the base tree and the sandbox's writes) with the
// entry's volume: while one exists, the entry is not removed.
const LabelLayer = "dev.litterbox.cache-layer"

// LayerSub is the directory of an entry's volume that holds what the
// setup added to /src, and HomeSub the one holding the home.
const (
	LayerSub = "src"
	HomeSub  = "home"
)

// Entry is one kept setup result: a volume holding what the setup
// command added to /src (the base's tracked files left out) in src/, the
// home in home/ and each [setup] keep path in keep/ID/, and the record of
// how it was made. Entries live in the repository's git dir and
// its own engine volumes: no other repository ever sees one.
type Entry struct {
	Key     string    `json:"key"`
	Volume  string    `json:"volume"`
	Image   string    `json:"image"`
	ImageID string    `json:"image_id"`
	Setup   string    `json:"setup"`
	Inputs  []string  `json:"inputs"`         // the [setup] inputs, or empty: the whole tree
	Keep    []string  `json:"keep,omitempty"` // the [setup] keep paths it holds besides /src and the home
	Base    string    `json:"base"`           // the commit of the sandbox it was made in
	From    string    `json:"from"`           // that sandbox
	Created time.Time `json:"created"`
	Used    time.Time `json:"used,omitempty"`
	Hits    int       `json:"hits"`
	Files   int       `json:"files"`
	Bytes   int64     `json:"bytes"`
	// State is "saving" while the first create copies it, then "ready".
	State string `json:"state"`
	PID   int    `json:"pid,omitempty"`
	// LiesUnder names the sandboxes whose /src lies over the entry, as
	// their records say (List fills it).
	LiesUnder []string `json:"lies_under,omitempty"`
}

const (
	cacheSaving = "saving"
	cacheReady  = "ready"
)

// volume names a key's volume. The '.' keeps it apart from every
// sandbox's resources, whose names are slugs.
func (c *Cache) volume(key string) string {
	return "litterbox-" + c.Agent.Repo.RepoSlug + "-" + c.Agent.Repo.RepoID + ".cache-" + key[:16]
}

// Cacheable says whether a create with cfg may use the setup cache.
func Cacheable(cfg config.Config) bool {
	return cfg.SetupCache && cfg.SetupCommand != config.DefaultSetup && strings.TrimSpace(cfg.SetupCommand) != ""
}

// Key is what a setup's result depends on: this repository, the
// image's content (imageID, as preflight found it), the command, the user
// and environment it runs with, its network, and the files it reads (the
// [setup] inputs' blobs at base, or base's whole tree).
func (c *Cache) Key(ctx context.Context, cfg config.Config, imageID, base string) (string, error) {
	h := sha256.New()
	// v2: entries hold the home and kept paths beside /src.
	fmt.Fprintf(h, "litterbox setup cache v2\x00repo %s\x00image %s\x00setup %s\x00user %s\x00network %s %v %v\x00keep %q\x00",
		c.Agent.Repo.RepoID, imageID, cfg.SetupCommand, cfg.User, cfg.Network, cfg.SetupOpen, cfg.SetupAllow, cfg.SetupKeep)
	for _, k := range slices.Sorted(maps.Keys(cfg.Env)) {
		fmt.Fprintf(h, "env %s=%s\x00", k, cfg.Env[k])
	}
	// Secrets by name: a value never reaches a key or a record.
	for _, k := range slices.Sorted(maps.Keys(cfg.Secrets)) {
		fmt.Fprintf(h, "secret %s %s\x00", k, cfg.Secrets[k])
	}
	if len(cfg.SetupInputs) == 0 {
		tree, err := c.Agent.Repo.Git.RevParse(ctx, base+"^{tree}")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "tree %s\x00", tree)
	} else {
		// A named input missing at base counts as missing: adding it
		// later changes the key.
		out, err := c.Agent.Repo.Git.Output(ctx, append([]string{"ls-tree", "-r", "-z", base, "--"}, cfg.SetupInputs...)...)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "inputs %q\x00%s\x00", cfg.SetupInputs, out)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Lookup returns the ready entry of key whose volume is there and
// ours, or nil.
func (c *Cache) Lookup(ctx context.Context, key string) *Entry {
	e, err := c.load(key)
	if err != nil || e == nil || e.State != cacheReady {
		return nil
	}
	labels, err := c.Agent.Repo.Provider.VolumeLabels(ctx, e.Volume)
	if errors.Is(err, box.ErrNoSuchVolume) {
		// Removed behind our back (docker volume prune): the record goes
		// too, so this create keeps a new entry.
		os.Remove(c.Agent.Repo.Layout().CacheEntry(key))
		return nil
	}
	if err != nil || labels[hostrepo.LabelRepoID] != c.Agent.Repo.RepoID || labels[LabelKey] != key {
		return nil
	}
	return e
}

func (c *Cache) load(key string) (*Entry, error) {
	data, err := os.ReadFile(c.Agent.Repo.Layout().CacheEntry(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", c.Agent.Repo.Layout().CacheEntry(key), err)
	}
	return &e, nil
}

// trees are the directories of a sandbox an entry holds, each with its
// place in the entry's volume.
func trees(volume string, keep []string) []volcopy.Tree {
	t := []volcopy.Tree{{Dir: hostrepo.Workdir, Volume: volume, Sub: LayerSub}, {Dir: config.Home, Volume: volume, Sub: HomeSub}}
	for _, p := range keep {
		t = append(t, volcopy.Tree{Dir: p, Volume: volume, Sub: "keep/" + hostrepo.KeepID(p)})
	}
	return t
}

// Restore fills the new sandbox's /src, home and kept paths from entry e;
// layered, its /src and home lie over the entry's already, and only the
// kept paths are copied (a create over an entry has none).
func (c *Cache) Restore(ctx context.Context, n hostrepo.Names, image string, e *Entry, layered bool) error {
	t := trees(e.Volume, e.Keep)
	if layered {
		t = t[2:]
	}
	if len(t) > 0 {
		if _, err := volcopy.Copy(ctx, c.Agent, image, volcopy.Job{Sandbox: n.Container, Trees: t, IntoSandbox: true}); err != nil {
			return err
		}
	}
	e.Used, e.Hits = c.Agent.Repo.Now().UTC(), e.Hits+1
	_ = layout.WriteFileAtomic(c.Agent.Repo.Layout().CacheEntry(e.Key), layout.JSON(e))
	return nil
}

func (c *Cache) lock() (func(), error) {
	return layout.LockFile(c.Agent.Repo.Layout().Lock("setup-cache"))
}

// Hold runs hold, which saves the record of a sandbox whose /src will lie
// over entry e, while no entry can be removed, once it has seen e is still
// there: a removal after it finds the record, and keeps the entry. It
// reports false, running nothing, when e is gone.
func (c *Cache) Hold(ctx context.Context, e *Entry, hold func() error) (bool, error) {
	unlock, err := c.lock()
	if err != nil {
		return false, err
	}
	defer unlock()
	if c.Lookup(ctx, e.Key) == nil {
		return false, nil
	}
	return true, hold()
}

// layered names, for each entry's volume, the sandboxes whose record
// says their /src lies over it, sorted: one read of the records for all
// entries.
func (c *Cache) layered() map[string][]string {
	over := map[string][]string{}
	for slug, r := range c.Agent.Repo.Store().All() {
		if r.Layer != nil && r.Layer.Cache != "" {
			over[r.Layer.Cache] = append(over[r.Layer.Cache], slug)
		}
	}
	for _, slugs := range over {
		slices.Sort(slugs)
	}
	return over
}

// usedBy names the sandboxes whose /src lies over entry e: those whose
// record names it (over, from layered), else the volumes labelled with
// it (a record that cannot be read no longer names its entry; its volume
// still does).
func (c *Cache) usedBy(ctx context.Context, e Entry, over map[string][]string) ([]string, error) {
	var by []string
	for _, slug := range over[e.Volume] {
		by = append(by, "sandbox '"+slug+"'")
	}
	if len(by) > 0 {
		return by, nil
	}
	// The entry's volume name holds the repository's id: its label alone
	// names this repository's volumes.
	vols, err := c.Agent.Repo.Provider.Volumes(ctx, map[string]string{LabelLayer: e.Volume})
	for _, v := range vols {
		by = append(by, "volume "+v)
	}
	return by, err
}

// InUseError refuses to remove an entry some sandboxes' /src lies over.
type InUseError struct {
	Key string
	// Sandboxes names them ("sandbox 'NAME'", or "volume NAME" for one
	// whose record is unreadable).
	Sandboxes []string
}

func (e *InUseError) Error() string {
	return fmt.Sprintf("setup cache entry %s lies under the /src of %s: remove it once they are deleted (litterbox delete)", e.Key[:12], strings.Join(e.Sandboxes, ", "))
}

// Save keeps what the setup command added to the sandbox's /src as
// the entry of key. Two creates that miss at once race for the record
// file; the loser leaves the saving to the winner. A failure costs the
// cache, never the sandbox: it comes back as a warning.
func (c *Cache) Save(ctx context.Context, n hostrepo.Names, cfg config.Config, key, imageID, base string) (*Entry, error) {
	if err := os.MkdirAll(c.Agent.Repo.Layout().Cache(), 0o755); err != nil {
		return nil, err
	}
	inputs := cfg.SetupInputs
	if inputs == nil {
		inputs = []string{} // the record says [], not null
	}
	e := &Entry{
		Key: key, Volume: c.volume(key), Image: cfg.Image, ImageID: imageID, Setup: c.Agent.Repo.Secrets.Seen().Redact(cfg.SetupCommand),
		Inputs: inputs, Keep: cfg.SetupKeep, Base: base, From: n.Slug, Created: c.Agent.Repo.Now().UTC(), State: cacheSaving, PID: os.Getpid(),
	}
	f, err := os.OpenFile(c.Agent.Repo.Layout().CacheEntry(key), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		old, lerr := c.load(key)
		if lerr != nil || old == nil || old.State == cacheReady || hostrepo.ProcessAlive(old.PID) {
			return nil, nil
		}
		// A save that died half-way: start over.
		_ = c.Agent.Repo.Provider.RemoveVolume(ctx, old.Volume)
		if err := layout.WriteFileAtomic(c.Agent.Repo.Layout().CacheEntry(key), layout.JSON(e)); err != nil {
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
			os.Remove(c.Agent.Repo.Layout().CacheEntry(key))
			return nil, err
		}
	}
	fail := func(err error) (*Entry, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = c.Agent.Repo.Provider.RemoveVolume(ctx, e.Volume)
		os.Remove(c.Agent.Repo.Layout().CacheEntry(key))
		return nil, err
	}
	tracked, err := c.Agent.Repo.Git.Output(ctx, "ls-tree", "-r", "-z", "--name-only", base)
	if err != nil {
		return fail(err)
	}
	labels := c.Agent.Repo.Labels("", role)
	labels[LabelKey] = key
	if err := c.Agent.Repo.Provider.CreateVolume(ctx, e.Volume, labels); err != nil {
		return fail(err)
	}
	st, err := volcopy.Copy(ctx, c.Agent, cfg.Image, volcopy.Job{Sandbox: n.Container, Trees: trees(e.Volume, e.Keep), Skip: strings.NewReader(tracked)})
	if err != nil {
		return fail(err)
	}
	if st.Files == 0 {
		// Kept, an empty entry would make the next create skip a setup
		// whose work went elsewhere (/tmp, say), leaving it without what
		// the setup made.
		_, _ = fail(nil)
		return nil, ErrNothingKept
	}
	e.Files, e.Bytes, e.State, e.PID = st.Files, st.Bytes, cacheReady, 0
	if err := layout.WriteFileAtomic(c.Agent.Repo.Layout().CacheEntry(key), layout.JSON(e)); err != nil {
		return fail(err)
	}
	return e, nil
}

// ErrNothingKept is Save's answer for a setup that left no file the cache
// keeps (ignored files under /src).
var ErrNothingKept = errors.New("the setup command left no file where the cache keeps them (ignored files in /src, $HOME, [setup] keep paths); what it wrote elsewhere (/tmp) is not kept, so the next create runs it again")

// List returns this repository's setup cache entries, newest first,
// each checked against the engine: an entry whose volume is gone is
// dropped.
func (c *Cache) List(ctx context.Context) ([]Entry, error) {
	entries, err := c.entries()
	if err != nil {
		return nil, err
	}
	vols, err := c.Agent.Repo.Provider.Volumes(ctx, map[string]string{hostrepo.LabelManaged: role, hostrepo.LabelRepoID: c.Agent.Repo.RepoID})
	if err != nil {
		return nil, err
	}
	have := map[string]bool{}
	for _, v := range vols {
		have[v] = true
	}
	out := []Entry{}
	over := c.layered()
	for _, e := range entries {
		if !have[e.Volume] && e.State == cacheReady {
			os.Remove(c.Agent.Repo.Layout().CacheEntry(e.Key))
			continue
		}
		e.LiesUnder = over[e.Volume]
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b Entry) int { return b.Created.Compare(a.Created) })
	return out, nil
}

func (c *Cache) entries() ([]Entry, error) {
	names, err := os.ReadDir(c.Agent.Repo.Layout().Cache())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, d := range names {
		key, ok := strings.CutSuffix(d.Name(), ".json")
		if !ok || strings.HasPrefix(key, ".") {
			continue
		}
		e, err := c.load(key)
		if err != nil {
			return nil, err
		}
		if e != nil {
			out = append(out, *e)
		}
	}
	return out, nil
}

// Remove removes the entries whose key starts with prefix (at least
// 4 characters, as `cache ls` shows 12). An entry a create is copying from
// at this moment stays: the engine refuses to remove a volume in use.
func (c *Cache) Remove(ctx context.Context, prefix string) ([]Entry, error) {
	if len(prefix) < 4 {
		return nil, fmt.Errorf("cache key %q: give at least 4 characters of a key `litterbox cache ls` shows", prefix)
	}
	entries, err := c.entries()
	if err != nil {
		return nil, err
	}
	var match []Entry
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
	unlock, err := c.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	by, err := c.usedBy(ctx, match[0], c.layered())
	if err != nil {
		return nil, err
	}
	if len(by) > 0 {
		return nil, &InUseError{Key: match[0].Key, Sandboxes: by}
	}
	return match, c.remove(ctx, match[0])
}

func (c *Cache) remove(ctx context.Context, e Entry) error {
	if err := c.Agent.Repo.Provider.RemoveVolume(ctx, e.Volume); err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
		return fmt.Errorf("removing setup cache volume %s: %w", e.Volume, err)
	}
	if err := os.Remove(c.Agent.Repo.Layout().CacheEntry(e.Key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Prune removes every entry a create with the current configuration
// from HEAD would not use (another image, setup command or inputs), and
// entries left half-saved by a create that died. An entry some sandbox's
// /src lies over stays: kept names each such entry and its sandboxes.
func (c *Cache) Prune(ctx context.Context) (removed []Entry, kept []InUseError, err error) {
	keep := ""
	if cfg, err := c.Agent.Repo.CreateConfig(); err == nil && Cacheable(cfg) {
		head, herr := c.Agent.Repo.Git.ResolveCommit(ctx, "HEAD")
		if cfg.Build != nil && herr == nil {
			cfg.Image, err = c.Images.ProjectTag(ctx, cfg, head)
		}
		info, ierr := box.Images(c.Agent.Repo.Provider).Image(ctx, cfg.Image)
		if err == nil && herr == nil && ierr == nil {
			keep, _ = c.Key(ctx, cfg, info.ID, head)
		}
	}
	unlock, err := c.lock()
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	entries, err := c.entries()
	if err != nil {
		return nil, nil, err
	}
	over := c.layered()
	for _, e := range entries {
		if e.Key == keep || e.State == cacheSaving && hostrepo.ProcessAlive(e.PID) {
			continue
		}
		by, err := c.usedBy(ctx, e, over)
		if err != nil {
			return removed, kept, err
		}
		if len(by) > 0 {
			kept = append(kept, InUseError{Key: e.Key, Sandboxes: by})
			continue
		}
		if err := c.remove(ctx, e); err != nil {
			return removed, kept, err
		}
		removed = append(removed, e)
	}
	return removed, kept, nil
}
