package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/pool"
	"github.com/litterbox-dev/litterbox/runner"
)

// Pool is this repository's warm pool.
func (m *Manager) Pool() pool.Pool {
	return pool.Pool{P: m.Provider, RepoID: m.RepoID, LabelManaged: hostrepo.LabelManaged, LabelRepoID: hostrepo.LabelRepoID}
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
	// Made and Removed are what this fill or drain did; Left what it
	// could not remove.
	Made    []string `json:"made,omitempty"`
	Removed []string `json:"removed,omitempty"`
	Left    []string `json:"left,omitempty"`
}

// notPooled says why the pool cannot serve a sandbox of cfg, "" when it
// can. What differs per sandbox beyond its name cannot be made ahead: a
// host port, the egress proxy's volume.
func (m *Manager) notPooled(cfg config.Config) string {
	switch {
	case !m.Provider.Caps().Pool:
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
func (m *Manager) poolSpec(name string, cfg config.Config, digest string) box.Spec {
	n := hostrepo.Names{Container: name, Volume: name + "-src"}
	spec := m.ContainerSpec(n, "", cfg, nil, m.Helper)
	spec.Hostname = pool.Hostname
	delete(spec.Env, "LITTERBOX_SANDBOX")
	delete(spec.Labels, hostrepo.LabelSandbox)
	delete(spec.Labels, hostrepo.LabelBase)
	delete(spec.VolumeLabels, hostrepo.LabelSandbox)
	spec.Labels[pool.LabelDigest] = digest
	spec.Labels[pool.LabelVolumes] = pool.VolumesLabel(spec.Volumes)
	return spec
}

// poolDigest is the digest of the entries a sandbox of cfg may claim,
// imageID being the image it runs.
func (m *Manager) poolDigest(cfg config.Config, imageID string) string {
	return pool.Digest(m.poolSpec(m.Prefix()+".pool-0", cfg, ""), imageID)
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
// its volumes' names. It reports false when the create must make the box
// itself.
func (c *creation) claimPooled(ctx context.Context) (bool, error) {
	m := c.m
	if c.cfg.PoolSize == 0 || c.opts.fork != nil || m.notPooled(c.cfg) != "" {
		return false, nil
	}
	t := time.Now()
	e, ok, err := m.claimEntry(ctx, m.poolDigest(c.runConfig(), c.imageID), c.n.Container, c.boxes)
	if err != nil {
		c.warnings = append(c.warnings, "warm pool not used: "+oneLineErr(err))
	}
	if !ok {
		return false, nil
	}
	m.Owned(c.n.Container)
	vols := ownVolumes(hostrepo.Names{Container: e.Name, Volume: e.Name + "-src"}, c.cfg.SetupKeep)
	c.n.Volume, c.n.Pool = vols[0].Volume, e.Name
	c.rec.Volume, c.rec.Volumes, c.rec.Pool = c.n.Volume, vols[1:], e.Name
	c.pooled = true
	if err := m.Store().Save(c.rec); err != nil {
		return true, m.rollback(ctx, c.n, c.tip, &hostrepo.StepError{Step: "saving sandbox state", Err: err})
	}
	m.Step("claim pool entry "+e.Name, t)
	if fill := c.prefill(); fill != nil {
		if err := fill(ctx); err != nil {
			return true, m.rollback(ctx, c.n, c.tip, err)
		}
	}
	return true, nil
}

// claimEntry renames a ready entry of digest to target, from listed (the
// engine's boxes) or a listing of its own. Claims take turns
// on a lock in the git dir: an engine's rename is not atomic against
// another rename of the same box, and every claimer of this repository's
// entries runs on this host.
func (m *Manager) claimEntry(ctx context.Context, digest, target string, listed []box.Summary) (pool.Entry, bool, error) {
	unlock, err := layout.LockFile(m.Layout().PoolLock("claim"))
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
	return m.Pool().Claim(ctx, entries, digest, target)
}

// poolConfig is the config a pool entry is made for, read the way create
// reads it, with its digest: "" with the reason when the pool cannot serve
// it.
func (m *Manager) poolConfig(ctx context.Context) (*creation, string, error) {
	c := &creation{m: m, opts: CreateOptions{Name: "pool"}, fill: true}
	for _, look := range []func(context.Context) error{c.configure, c.resolveImage} {
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
	if why := m.notPooled(c.cfg); why != "" {
		return c, why, nil
	}
	return c, "", nil
}

// PoolStatus tells the pool: its size, the entries ready for the config
// of now and the stale ones.
func (m *Manager) PoolStatus(ctx context.Context) (*PoolState, error) {
	c, why, err := m.poolConfig(ctx)
	if err != nil {
		return nil, err
	}
	st := &PoolState{Size: c.cfg.PoolSize, NotPooled: why, Ready: []string{}, Stale: []string{}}
	if why == "" {
		st.Digest = m.poolDigest(c.runConfig(), c.imageID)
	}
	entries, err := m.Pool().Entries(ctx)
	if err != nil {
		return nil, err
	}
	ready, stale := pool.Split(entries, st.Digest)
	st.Ready, st.Stale = names(ready), names(stale)
	return st, nil
}

// FillPool brings the pool to its size for the config of now: it removes
// stale entries, then makes the missing ones, each created, hardened,
// started, given the helper and its volumes prepared, exactly as a create
// would make it. Fills take turns, so two never overshoot.
func (m *Manager) FillPool(ctx context.Context) (*PoolState, error) {
	unlock, err := layout.LockFile(m.Layout().PoolLock("fill"))
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := m.PoolStatus(ctx)
	if err != nil {
		return nil, err
	}
	st.Removed, st.Left = m.removeEntries(ctx, st.Stale)
	st.Stale = []string{}
	if st.NotPooled != "" {
		return st, nil
	}
	c, _, err := m.poolConfig(ctx)
	if err != nil {
		return st, err
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

// DrainPool removes every entry of the pool. A create after it refills
// the pool while [pool] size says so.
func (m *Manager) DrainPool(ctx context.Context) (*PoolState, error) {
	// After a fill under way, which would make entries behind it.
	for _, which := range []string{"fill", "claim"} {
		unlock, err := layout.LockFile(m.Layout().PoolLock(which))
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	entries, err := m.Pool().Entries(ctx)
	if err != nil {
		return nil, err
	}
	st := &PoolState{Ready: []string{}, Stale: []string{}}
	st.Removed, st.Left = m.removeEntries(ctx, names(entries))
	return st, nil
}

// removeEntries removes the named entries, found again by name so the
// volumes they list are read from the engine.
func (m *Manager) removeEntries(ctx context.Context, which []string) (removed, left []string) {
	if len(which) == 0 {
		return nil, nil
	}
	entries, err := m.Pool().Entries(ctx)
	if err != nil {
		return nil, []string{err.Error()}
	}
	want := map[string]bool{}
	for _, w := range which {
		want[w] = true
	}
	for _, e := range entries {
		if !want[e.Name] {
			continue
		}
		if l := m.Pool().Remove(ctx, e); len(l) > 0 {
			left = append(left, l...)
			continue
		}
		removed = append(removed, e.Name)
	}
	return removed, left
}

// makeEntry makes one entry of c's config; a failure leaves nothing.
func (m *Manager) makeEntry(ctx context.Context, c *creation, digest string) (string, error) {
	name := pool.NewName(m.Prefix())
	spec := m.poolSpec(name, c.runConfig(), digest)
	n := hostrepo.Names{Container: name, Volume: name + "-src"}
	err := m.startContainer(ctx, n, spec, nil)
	if err == nil {
		err = m.prepareVolumes(ctx, n, ownVolumes(n, c.cfg.SetupKeep), c.uid)
	}
	if err != nil {
		e := pool.Entry{Name: name, Volumes: []string{}}
		for _, v := range spec.Volumes {
			e.Volumes = append(e.Volumes, v.Volume)
		}
		if left := m.Pool().Remove(context.WithoutCancel(ctx), e); len(left) > 0 {
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
	all, err := pool.All(ctx, rt.Provider(r), hostrepo.LabelManaged, hostrepo.LabelRepo)
	if err != nil {
		return nil, err
	}
	out := make([]GoneEntry, 0, len(all))
	for _, e := range all {
		out = append(out, GoneEntry{Entry: e, RepoGone: !isDir(e.Repo)})
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
	for _, e := range all {
		if !e.RepoGone {
			continue
		}
		if l := pool.Remove(ctx, rt.Provider(r), e.Entry); len(l) > 0 {
			left = append(left, l...)
			continue
		}
		removed = append(removed, e)
	}
	return removed, left, nil
}
