package create

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/setupcache"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
	"github.com/litterbox-dev/litterbox/internal/volcopy"
)

// filesSource is where a new sandbox's /src comes from: the base commit's
// tree, that tree over a setup cache entry, or a fork's source's files.
// The create's steps are the same for each; only these differ.
type filesSource interface {
	// prefill, when not nil, fills /src while the box starts, before its
	// PID 1 runs (on a claimed pool entry, once it is claimed).
	prefill() func(context.Context) error
	// fill puts the rest into /src once the box runs.
	fill(ctx context.Context) error
	// setup is the setup command to run, "" when the files came set up,
	// and where the sandbox's snapshots start.
	setup() (cmd string, start snapshot.State)
}

// filesFor is where c's files come from, once its plan has looked the
// setup up in the cache.
func filesFor(c *creation) filesSource {
	switch {
	case c.opts.fork != nil:
		return forkFiles{c, c.opts.fork}
	case c.cacheHit != nil:
		return cachedFiles{treeFiles{c}, c.cacheHit}
	}
	return treeFiles{c}
}

// treeFiles are the base commit's files and its submodules', set up by
// the setup command.
type treeFiles struct{ c *creation }

func (treeFiles) prefill() func(context.Context) error { return nil }

// fill streams the base commit's tree into /src, unless /src lies over
// the commit's base tree already, then its submodules'.
func (s treeFiles) fill(ctx context.Context) (err error) {
	c := s.c
	m, n := c.m, c.n
	t := time.Now()
	what := "copy " + hostrepo.ShortID(c.base) + " into " + hostrepo.Workdir
	if c.tree != nil {
		what = "open " + hostrepo.Workdir + " over " + hostrepo.ShortID(c.base)
		err = c.fillOverBase(ctx)
	} else {
		err = m.copyTree(ctx, n, c.base, c.agentBase, c.cfg.SetupKeep, c.uid, c.gid, c.pooled)
	}
	if err != nil {
		return err
	}
	if c.subs, err = m.copySubmodules(ctx, n, c.base, c.uid, c.gid); err != nil {
		return err
	}
	c.step(what, t)
	return nil
}

func (s treeFiles) setup() (string, snapshot.State) {
	return s.c.cfg.SetupCommand, snapshot.State{Submodules: submodulePaths(s.c.subs)}
}

// cachedFiles are the base commit's tree over what an earlier setup of
// the same inputs made, kept in the setup cache: the setup does not run.
type cachedFiles struct {
	tree treeFiles
	hit  *setupcache.Entry
}

// prefill restores the cache entry's volumes: none but the kept paths
// when /src and the home lie over the entry (layout.Layer.Cache).
func (s cachedFiles) prefill() func(context.Context) error {
	c := s.tree.c
	m, n, image := c.m, c.n, c.cfg.Image
	layered := c.rec.Layer != nil && c.rec.Layer.Cache != ""
	return func(ctx context.Context) error {
		t := time.Now()
		if err := m.SetupCache().Restore(ctx, n, image, s.hit, layered); err != nil {
			return &hostrepo.StepError{Step: "copying setup cache " + s.hit.Volume, Err: err}
		}
		c.step("setup cache "+c.cacheKey[:12], t)
		return nil
	}
}

func (s cachedFiles) fill(ctx context.Context) error { return s.tree.fill(ctx) }

func (s cachedFiles) setup() (string, snapshot.State) {
	_, start := s.tree.setup()
	return "", start
}

// forkFiles are a copy of a fork's source's files, ignored ones included,
// set up already; the snapshots start where the source's do.
type forkFiles struct {
	c *creation
	f *forkSource
}

// prefill copies the source's volumes.
func (s forkFiles) prefill() func(context.Context) error {
	c, f := s.c, s.f
	m, n, image := c.m, c.n, c.cfg.Image
	return func(ctx context.Context) error {
		t := time.Now()
		if _, err := volcopy.Copy(ctx, m.Agent, image, f.copyJob(n.Container, c.cfg.SetupKeep)); err != nil {
			return &hostrepo.StepError{Step: "copying " + f.slug + "'s files", Err: err}
		}
		c.step("copy "+f.slug+"'s "+hostrepo.Workdir, t)
		return nil
	}
}

// fill copies the source's ignore rules, as the tree's copy would have
// kept them, and prepares the volumes the source had not.
func (s forkFiles) fill(ctx context.Context) error {
	c, f := s.c, s.f
	m, n := c.m, c.n
	if err := os.CopyFS(m.Repo.Layout().Ignore(c.slug), os.DirFS(m.Repo.Layout().Ignore(f.slug))); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &hostrepo.StepError{Step: "copying " + f.slug + "'s ignore rules", Err: err}
	}
	// A volume the source had not (an older sandbox's home) is new.
	return m.prepareVolumes(ctx, n, ownVolumes(n, c.cfg.SetupKeep)[1:], c.uid)
}

func (s forkFiles) setup() (string, snapshot.State) { return "", s.f.snap }
