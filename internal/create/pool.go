package create

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/basetree"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/pool"
	"github.com/litterbox-dev/litterbox/internal/preflight"
	"github.com/litterbox-dev/litterbox/runner"
)

// Pool is this repository's warm pool.
func (m *Creator) Pool() pool.Pool {
	return pool.Pool{P: m.Repo.Provider, RepoID: m.Repo.RepoID}
}

// PoolState is the warm pool as `litterbox pool` tells it.
type PoolState struct {
	// Size is [pool] size; Digest is what the config makes of a box now
	// ("" when the pool cannot serve it, and NotPooled says why).
	Size      int    `json:"size"`
	Digest    string `json:"digest,omitempty"`
	NotPooled string `json:"not_pooled,omitempty"`
	// Ready entries a create would claim; Stale ones (another config's,
	// or stopped) a fill removes.
	Ready []string `json:"ready"`
	Stale []string `json:"stale"`
	// Making are entries being made (by a refill under way).
	Making []string `json:"making"`
	// LastError is the last fill's failure, with its time; "" after a
	// fill that succeeded.
	LastError string `json:"last_error,omitempty"`
	// Made and Removed are what this fill or drain did; Left what it
	// could not remove.
	Made    []string `json:"made,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Left    []string `json:"left,omitempty"`
}

// notPooled says why the pool cannot serve a sandbox of cfg, "" when it
// can. What differs per sandbox beyond its name cannot be made ahead: a
// host port, the egress proxy's volume.
func (m *Creator) notPooled(cfg config.Config) string {
	switch {
	case !m.Repo.Provider.Caps().Pool:
		return box.Unsupported("a warm pool").Error()
	case len(cfg.Ports) > 0:
		return "a sandbox with [[ports]] gets its host ports when it is made"
	case m.Proxies().Proxied(cfg):
		return `a sandbox of network mode "allow" gets its egress proxy when it is made`
	}
	return ""
}

// poolSpec is the box of a pool entry called name: the sandbox's
// (ContainerSpec) but for what names it, which is not known yet; the
// record says whose it is once claimed.
func (m *Creator) poolSpec(name string, cfg config.Config, digest, tree string) box.Spec {
	n := hostrepo.Names{Container: name, Volume: name + "-src"}
	spec := m.ContainerSpec(n, "", cfg, nil, m.Agent.Helper)
	if tree != "" {
		// /src lies over the tree: the entry serves creates of its commit.
		spec.Labels[basetree.LabelTree] = tree
	}
	spec.Hostname = pool.Hostname
	delete(spec.Env, "LITTERBOX_SANDBOX")
	delete(spec.Labels, hostrepo.LabelSandbox)
	delete(spec.Labels, hostrepo.LabelBase)
	delete(spec.VolumeLabels, hostrepo.LabelSandbox)
	spec.Labels[pool.LabelDigest] = digest
	vols := pool.VolumesLabel(spec.Volumes)
	if tree != "" {
		vols += "," + n.Volume + "-upper," + n.Volume + "-work"
	}
	spec.Labels[pool.LabelVolumes] = vols
	return spec
}

// poolDigest is the digest of the entries a sandbox of cfg may claim,
// imageID being the image it runs and tree the base tree its /src lies
// over ("" for none).
func (m *Creator) poolDigest(cfg config.Config, imageID, tree string) string {
	return pool.Digest(m.poolSpec(m.Repo.Prefix()+".pool-0", cfg, "", tree), imageID)
}

// runConfig is the config the box runs with while it is made: the setup's
// own network, when it has one.
func (c *creation) runConfig() config.Config {
	run := c.cfg
	if c.cfg.SetupOpensNetwork() {
		run.Network = c.cfg.OutboundNetwork()
	}
	return run
}

// claimPooled makes the sandbox from a pool entry, when the pool has one
// for its config: the entry takes the sandbox's container name, the record
// its volumes' names (saved before the rename, so a create that dies in
// between leaves nothing its rollback or delete cannot find). It reports
// false when the create must make the box itself.
func (c *creation) claimPooled(ctx context.Context) (bool, error) {
	m := c.m
	if c.cfg.PoolSize == 0 || c.opts.fork != nil || m.notPooled(c.cfg) != "" {
		return false, nil
	}
	t := time.Now()
	cold, coldNames := *c.rec, c.n
	claimed := func(e pool.Entry) error {
		vols := ownVolumes(hostrepo.Names{Container: e.Name, Volume: e.Name + "-src"}, c.cfg.SetupKeep)
		c.n.Volume, c.n.Pool = vols[0].Volume, e.Name
		c.rec.Volume, c.rec.Volumes, c.rec.Pool = c.n.Volume, vols[1:], e.Name
		if c.tree != nil {
			// The digest holds the tree: the entry lies over this one.
			c.rec.Layer = &layout.Layer{Base: c.tree.Volume, Upper: c.n.Volume + "-upper", Work: c.n.Volume + "-work"}
		}
		c.rec.ContainerID = m.keptID(e.ID)
		return m.Repo.Store().Save(c.rec)
	}
	e, ok, err := m.claimEntry(ctx, m.poolDigest(c.runConfig(), c.imageID, c.treeVolume()), c.n.Container, c.boxes, claimed)
	if err != nil {
		// A rename that may have happened (cancelled, the engine gone):
		// the box's undo removes whatever of the entry the record names.
		return true, &hostrepo.StepError{Step: "claiming a warm pool entry", Err: err}
	}
	if !ok {
		if c.n.Pool != "" { // tried one another create had taken
			*c.rec, c.n = cold, coldNames
			if err := m.Repo.Store().Save(c.rec); err != nil {
				return true, &hostrepo.StepError{Step: "saving sandbox state", Err: err}
			}
		}
		return false, nil
	}
	m.Repo.Owned(c.n.Container)
	c.pooled = true
	c.storage = storageAhead(ctx, m.Repo.Provider)
	c.step("claim pool entry "+e.Name, t)
	if fill := c.files.prefill(); fill != nil {
		return true, fill(ctx)
	}
	return true, nil
}

// storageAhead starts asking p where a sandbox's /src lives (on a
// cluster, a kubectl get the box made ahead did not need), for a claimed
// box's report, so that the answer comes while the tree is copied in and
// the setup runs.
func storageAhead(ctx context.Context, p box.Provider) func() string {
	st, ok := p.(box.StorageTeller)
	if !ok {
		return func() string { return "" }
	}
	ch := make(chan string, 1)
	go func() { ch <- st.Storage(ctx) }()
	return sync.OnceValue(func() string { return <-ch })
}

// claimEntry renames a ready entry of digest to target, from listed (the
// engine's boxes) or a listing of its own, before running before each
// attempt. Claims take turns on a lock in the git dir: an engine's rename
// is not atomic against another rename of the same box, and every claimer
// of this repository's entries runs on this host. A fill removes entries
// under the same lock.
func (m *Creator) claimEntry(ctx context.Context, digest, target string, listed []box.Summary, before func(pool.Entry) error) (pool.Entry, bool, error) {
	unlock, err := layout.LockFile(m.Repo.Layout().PoolLock("claim"))
	if err != nil {
		return pool.Entry{}, false, err
	}
	defer unlock()
	// The listing the memory budget read, when there was one: an entry
	// claimed since fails its rename and the next is tried.
	entries := m.Pool().EntriesOf(listed)
	if listed == nil {
		if entries, err = m.Pool().Entries(ctx); err != nil {
			return pool.Entry{}, false, err
		}
	}
	return m.Pool().Claim(ctx, entries, digest, target, before)
}

// poolConfig is the config a pool entry is made for, read the way create
// reads it (but for the secrets, which no entry holds: a fill in the
// background never runs a password manager), with the reason the pool
// cannot serve it, "" when it can.
func (m *Creator) poolConfig(ctx context.Context) (*creation, string, error) {
	c := &creation{m: m, opts: CreateOptions{Name: "pool"}, fill: true}
	for _, look := range []func(context.Context) error{c.configure, c.resolveImage, c.settleBase, c.settleTree} {
		if err := look(ctx); err != nil {
			return nil, "", err
		}
	}
	// The memory a create would give (a share of the budget, unless the
	// config sets it) is part of the box. Past the budget is the fill's
	// to refuse, entry by entry.
	var le *LimitError
	if err := c.checkMemory(ctx); err != nil && !errors.As(err, &le) {
		return nil, "", err
	}
	return c, m.notPooled(c.cfg), nil
}

// PoolStatus tells the pool: its size, the entries ready for the config
// of now, those being made, the stale ones, and a fill's last failure.
func (m *Creator) PoolStatus(ctx context.Context) (*PoolState, error) {
	c, why, err := m.poolConfig(ctx)
	if err != nil {
		return nil, err
	}
	st, _, _, err := m.poolState(ctx, c, why)
	return st, err
}

// poolState is the pool for config c, with its ready and stale entries.
func (m *Creator) poolState(ctx context.Context, c *creation, why string) (st *PoolState, ready, stale []pool.Entry, err error) {
	st = &PoolState{Size: c.cfg.PoolSize, NotPooled: why, Ready: []string{}, Stale: []string{}, Making: []string{}}
	if why == "" {
		st.Digest = m.poolDigest(c.runConfig(), c.imageID, c.treeVolume())
	}
	if data, err := os.ReadFile(m.Repo.Layout().PoolError()); err == nil {
		st.LastError = strings.TrimSpace(string(data))
	}
	// The listing the memory budget read, when it read one.
	entries := m.Pool().EntriesOf(c.boxes)
	if c.boxes == nil {
		if entries, err = m.Pool().Entries(ctx); err != nil {
			return nil, nil, nil, err
		}
	}
	ready, stale = pool.Split(entries, st.Digest)
	st.Ready = names(ready)
	for _, e := range stale {
		if e.Making {
			st.Making = append(st.Making, e.Name)
		} else {
			st.Stale = append(st.Stale, e.Name)
		}
	}
	return st, ready, stale, nil
}

// FillPool brings the pool to its size for the config of now, read once:
// it removes stale entries (and, holding the fill lock, entries a dead
// fill left half made) and those past the size, then makes the missing
// ones, each created, hardened, started, given the helper and its volumes
// prepared, exactly as a create would make it, under a name no create
// claims until it is ready. Fills take turns, so two never overshoot; a
// failure is kept for `litterbox pool` to tell.
func (m *Creator) FillPool(ctx context.Context) (st *PoolState, err error) {
	unlock, err := layout.LockFile(m.Repo.Layout().PoolLock("fill"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	defer func() { m.keepFillError(err) }()
	c, why, err := m.poolConfig(ctx)
	if err != nil {
		return nil, err
	}
	st, ready, stale, err := m.poolState(ctx, c, why)
	if err != nil {
		return nil, err
	}
	gone := stale
	if len(ready) > st.Size {
		gone, ready = append(gone, ready[st.Size:]...), ready[:st.Size]
	}
	st.Removed, st.Left = m.RemoveEntries(ctx, gone)
	st.Ready, st.Stale, st.Making = names(ready), []string{}, []string{}
	if why != "" {
		return st, nil
	}
	for len(st.Ready) < st.Size {
		if err := c.checkMemory(ctx); err != nil {
			return st, err
		}
		name, err := m.makeEntry(ctx, c, st.Digest)
		if err != nil {
			return st, err
		}
		st.Made, st.Ready = append(st.Made, name), append(st.Ready, name)
	}
	return st, nil
}

// keepFillError keeps a fill's failure where PoolStatus reads it (a
// refill runs detached, with nowhere else to say it), or clears it.
func (m *Creator) keepFillError(err error) {
	path := m.Repo.Layout().PoolError()
	if err == nil {
		os.Remove(path)
		return
	}
	line := time.Now().UTC().Format(time.RFC3339) + " " + preflight.OneLineErr(err)
	_ = os.WriteFile(path, []byte(agenttext.Cap(line, 1000)+"\n"), 0o600)
}

// DrainPool removes every entry of the pool. A create after it refills
// the pool while [pool] size says so.
func (m *Creator) DrainPool(ctx context.Context) (*PoolState, error) {
	// After a fill under way, which would make entries behind it.
	unlock, err := layout.LockFile(m.Repo.Layout().PoolLock("fill"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	entries, err := m.Pool().Entries(ctx)
	if err != nil {
		return nil, err
	}
	st := &PoolState{Ready: []string{}, Stale: []string{}, Making: []string{}}
	st.Removed, st.Left = m.RemoveEntries(ctx, entries)
	return st, nil
}

// RemoveEntries removes entries, taking turns with claims: a box a create
// is renaming is not removed under it.
func (m *Creator) RemoveEntries(ctx context.Context, entries []pool.Entry) (removed, left []string) {
	if len(entries) == 0 {
		return nil, nil
	}
	unlock, err := layout.LockFile(m.Repo.Layout().PoolLock("claim"))
	if err != nil {
		return nil, []string{err.Error()}
	}
	defer unlock()
	// The entries were listed before the lock: one a create claimed since
	// is a sandbox now, and its volumes are its /src (a cluster deletes a
	// claim in use when its pod goes; docker refuses).
	now, err := m.Pool().Entries(ctx)
	if err != nil {
		return nil, []string{err.Error()}
	}
	entries = slices.DeleteFunc(entries, func(e pool.Entry) bool {
		return !slices.ContainsFunc(now, func(n pool.Entry) bool { return n.Name == e.Name })
	})
	for _, e := range entries {
		if l := pool.Remove(ctx, m.Repo.Provider, e); len(l) > 0 {
			left = append(left, l...)
			continue
		}
		removed = append(removed, e.Name)
	}
	return removed, left
}

// makeEntry makes one entry of c's config under its making name, and
// renames it ready once its volumes are prepared; a failure leaves nothing.
func (m *Creator) makeEntry(ctx context.Context, c *creation, digest string) (string, error) {
	name := pool.NewName(m.Repo.Prefix())
	mk := pool.MakingName(name)
	// The volumes have the entry's name from the start; the box, until it
	// is ready, the making name.
	spec := m.poolSpec(name, c.runConfig(), digest, c.treeVolume())
	spec.Name = mk
	n := hostrepo.Names{Container: mk, Volume: name + "-src"}
	var err error
	if c.treeKey != "" {
		// The entry's /src over the tree its fill saw.
		err = c.entryOverlay(ctx, n.Volume, spec.VolumeLabels)
	}
	if err == nil {
		_, err = m.startContainer(ctx, n, spec, nil)
	}
	if err == nil {
		err = m.prepareVolumes(ctx, n, spec.Volumes, c.uid)
	}
	if err == nil {
		err = box.PoolOf(m.Repo.Provider).Claim(ctx, mk, name)
	}
	if err != nil {
		e := pool.Entry{Name: mk, Volumes: pool.VolumesOf(spec.Labels)}
		// A rename cut short may have given the ready name already (on a
		// cluster, an alias): that goes too.
		_ = m.Repo.Provider.Remove(context.WithoutCancel(ctx), name)
		if left := pool.Remove(context.WithoutCancel(ctx), m.Repo.Provider, e); len(left) > 0 {
			err = fmt.Errorf("%w (also left: %v)", err, left)
		}
		return "", fmt.Errorf("making pool entry %s: %w", name, err)
	}
	return name, nil
}

func names(entries []pool.Entry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name)
	}
	return out
}

// PoolEntriesAll are the pool entries of every repository on the engine
// of rt, each with whether its repository is gone.
func PoolEntriesAll(ctx context.Context, r runner.Runner, rt engine.Runtime) ([]GoneEntry, error) {
	all, err := pool.All(ctx, rt.Provider(r))
	if err != nil {
		return nil, err
	}
	out := make([]GoneEntry, 0, len(all))
	for _, e := range all {
		out = append(out, GoneEntry{Entry: e, RepoGone: hostrepo.Gone(e.Repo)})
	}
	return out, nil
}

// GoneEntry is a pool entry with whether its repository is gone.
type GoneEntry struct {
	pool.Entry
	RepoGone bool `json:"repo_gone"`
}

// DrainGone removes the pool entries whose repository is gone: nothing
// can claim them again. It returns those it removed, and what it left.
func DrainGone(ctx context.Context, r runner.Runner, rt engine.Runtime) (removed []GoneEntry, left []string, err error) {
	all, err := PoolEntriesAll(ctx, r, rt)
	if err != nil {
		return nil, nil, err
	}
	p := rt.Provider(r)
	for _, e := range all {
		if !e.RepoGone {
			continue
		}
		if l := pool.Remove(ctx, p, e.Entry); len(l) > 0 {
			left = append(left, l...)
			continue
		}
		removed = append(removed, e)
	}
	return removed, left, nil
}
