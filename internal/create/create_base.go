package create

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/basetree"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/setupcache"
)

// Bases are the base trees this repository's sandboxes are made over.
func (m *Creator) Bases() basetree.Trees { return basetree.Trees{Repo: m.Repo} }

// overBase reports whether /src can lie over a base tree shared with
// other sandboxes: on an engine that makes such volumes, for the files of
// a commit of the user's (an agent's commit is copied under the attributes
// of the user's work tree, which may change), not a fork's (a copy of its
// source's files), with no kept path mounted inside /src (which the
// tree's files there would lie under). A pool entry lies over the tree of
// the commit its fill saw, and only a create of that commit claims it.
func (c *creation) overBase() bool {
	return box.Overlays(c.m.Repo.Provider) != nil && (c.opts.fork == nil || c.opts.fork.layer != nil) &&
		!c.agentBase && len(c.cfg.SetupKeep) == 0
}

// settleTree names the base tree of c's base (c.treeKey), when /src lies
// over one; it makes nothing.
func (c *creation) settleTree(ctx context.Context) error {
	if !c.overBase() {
		return nil
	}
	if f := c.opts.fork; f != nil {
		c.treeKey = f.treeKey // the source's, whatever the settings now
		return nil
	}
	settings, err := c.m.Repo.Git.CopySettings(ctx)
	if err != nil {
		return &hostrepo.StepError{Step: "reading git's settings", Err: err}
	}
	c.treeKey = basetree.Key(c.base, c.uid, c.gid, settings+userAttributes(settings))
	return nil
}

// treeVolume is the volume of c's base tree, "" when /src lies over none.
func (c *creation) treeVolume() string {
	if c.treeKey == "" {
		return ""
	}
	return c.m.Bases().VolumeOf(c.treeKey)
}

// useTree makes the base tree when this is the first sandbox (or pool
// entry) of its commit, running hold with it under the trees' lock.
func (c *creation) useTree(ctx context.Context, hold func(basetree.Tree) error) (made bool, err error) {
	src := basetree.Source{Key: c.treeKey, Commit: c.base, Image: c.cfg.Image, User: fmt.Sprintf("%d:%d", c.uid, c.gid), Fill: c.fillBase}
	if f := c.opts.fork; f != nil {
		// The source's tree is whole while the source lies over it; were
		// it not, a tree made now could differ from the one its layer
		// was made over.
		src.Fill = func(context.Context, box.Box, string) error {
			return fmt.Errorf("the base tree under sandbox '%s' is not whole on this engine (its marker is gone): the fork would differ from it; fork it again once it is made anew (delete and create it)", f.slug)
		}
	}
	tree, made, err := c.m.Bases().Use(ctx, src, hold)
	if err != nil {
		return false, &hostrepo.StepError{Step: "making the base tree of " + hostrepo.ShortID(c.base), Err: err}
	}
	c.tree = &tree
	return made, nil
}

// layerFiles makes the base tree when it is the first sandbox of its
// commit, before the box whose /src lies over it: the files' copy then
// costs nothing for every sandbox after the first. The record names the
// tree, and the layers the sandbox's /src will have, before any prune
// can look; makeBox makes that /src (overlay), or claims a pool entry
// over the same tree.
func (c *creation) layerFiles(ctx context.Context) error {
	if c.treeKey == "" {
		return nil
	}
	m, n := c.m, c.n
	t := time.Now()
	made, err := c.useTree(ctx, func(tr basetree.Tree) error {
		c.rec.Layer = &layout.Layer{Base: tr.Volume, Upper: n.Volume + "-upper", Work: n.Volume + "-work"}
		if c.cacheHit != nil {
			return c.layerCache(ctx)
		}
		if f := c.opts.fork; f != nil {
			// Over the setup cache entry its source lies over too, which
			// the source's record keeps (its home is copied).
			c.rec.Layer.Cache = f.layer.Cache
		}
		return m.Repo.Store().Save(c.rec)
	})
	if err != nil {
		return err
	}
	how := "shared"
	if made {
		how = "made"
	}
	c.step("base tree "+hostrepo.ShortID(c.base)+" "+how, t)
	return nil
}

// layerCache lays /src over the setup cache entry the create found as
// well as over the tree, and the home over the entry's home, so that
// their files cost no copy: the record names the entry, under the
// cache's lock, before any removal of entries can look. An entry removed
// since it was found is not used: the setup runs.
func (c *creation) layerCache(ctx context.Context) error {
	store := c.m.Repo.Store()
	held, err := c.m.SetupCache().Hold(ctx, c.cacheHit, func() error {
		home := c.n.Container + "-home"
		c.rec.Layer.Cache, c.rec.Layer.HomeUpper, c.rec.Layer.HomeWork = c.cacheHit.Volume, home+"-upper", home+"-work"
		return store.Save(c.rec)
	})
	if err != nil || held {
		return err
	}
	c.cacheHit, c.cache = nil, nil
	c.files = filesFor(c)
	return store.Save(c.rec)
}

// overlay makes volume name, whose upper and work layers are named after
// it, over base tree volume tree (and, when cache is set, that setup
// cache entry's files over the tree), labelled labels and with the
// tree's and the entry's names (basetree.LabelTree, setupcache.LabelLayer).
func (c *creation) overlay(ctx context.Context, tree, cache, name string, labels map[string]string) error {
	labels = maps.Clone(labels)
	labels[basetree.LabelTree] = tree
	o := box.Overlay{Name: name, Lower: box.VolumeDir{Volume: tree}, Upper: name + "-upper", Work: name + "-work", Labels: labels}
	if cache != "" {
		labels[setupcache.LabelLayer] = cache
		o.Between = &box.VolumeDir{Volume: cache, Sub: setupcache.LayerSub}
	}
	if err := box.Overlays(c.m.Repo.Provider).OverlayVolume(ctx, o); err != nil {
		return &hostrepo.StepError{Step: "making " + hostrepo.Workdir + " over base tree " + tree, Err: err}
	}
	return nil
}

// homeOverlay makes the sandbox's home volume over the home of the setup
// cache entry its /src lies over, when it does.
func (c *creation) homeOverlay(ctx context.Context, labels map[string]string) error {
	l := c.rec.Layer
	if l == nil || l.HomeUpper == "" {
		return nil
	}
	labels = maps.Clone(labels)
	labels[setupcache.LabelLayer] = l.Cache
	home := ownVolumes(c.n, nil)[1].Volume
	err := box.Overlays(c.m.Repo.Provider).OverlayVolume(ctx, box.Overlay{
		Name: home, Lower: box.VolumeDir{Volume: l.Cache, Sub: setupcache.HomeSub}, Upper: l.HomeUpper, Work: l.HomeWork, Labels: labels,
	})
	if err != nil {
		return &hostrepo.StepError{Step: "making " + config.Home + " over setup cache " + l.Cache, Err: err}
	}
	return nil
}

// entryOverlay makes a pool entry's /src, volume name, over c's base
// tree, while the trees' lock is held: the overlay's label keeps the tree
// from the moment it exists (a pool entry has no record).
func (c *creation) entryOverlay(ctx context.Context, name string, labels map[string]string) error {
	_, err := c.useTree(ctx, func(tr basetree.Tree) error { return c.overlay(ctx, tr.Volume, "", name, labels) })
	return err
}

// removeLayer removes the sandbox's /src volume and its own layers, when
// the box's undo has not (the box was never made).
func (c *creation) removeLayer(ctx context.Context) []string {
	if c.rec == nil || c.rec.Layer == nil {
		return nil
	}
	var left []string
	vols := append([]string{c.n.Volume}, c.rec.Layer.Own()...)
	if c.rec.Layer.HomeUpper != "" {
		vols = append(vols, ownVolumes(c.n, nil)[1].Volume)
	}
	for _, v := range vols {
		if err := c.m.Repo.Provider.RemoveVolume(ctx, v); err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
			left = append(left, "volume "+v)
		}
	}
	return left
}

// fillBase copies the base commit's tree into /src of b, a box that
// mounts the new tree's volume there, and its rule files under rules.
func (c *creation) fillBase(ctx context.Context, b box.Box, rules string) error {
	m := c.m
	src := archiveSource{g: m.Repo.Git, gitDir: m.Repo.GitDir, dir: filepath.Join(m.Repo.Layout().TmpOf(c.slug), "archive")}
	into := destination{hostrepo.Workdir, func(ctx context.Context, r io.Reader) error { return b.CopyIn(ctx, hostrepo.Workdir, r) }}
	return m.copyArchive(ctx, src, c.base, into, c.uid, c.gid, keepRules(rules))
}

// fillOverBase readies /src made over the base tree: its root and the
// other volumes given to the sandbox user (a pool entry's were when it was
// made), the rules mirror copied from the tree's.
func (c *creation) fillOverBase(ctx context.Context) error {
	m, n := c.m, c.n
	if !c.pooled {
		if err := m.prepareVolumes(ctx, n, ownVolumes(n, c.cfg.SetupKeep), c.uid); err != nil {
			return err
		}
	}
	if err := os.CopyFS(m.Repo.Layout().Ignore(c.slug), os.DirFS(c.tree.Rules)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return &hostrepo.StepError{Step: "copying the base tree's ignore rules", Err: err}
	}
	return nil
}

// userAttributes is what the user's own attributes file holds (git's
// core.attributesFile, else its default place): a checkout reads it, so a
// change to it is a change of what the copy writes.
func userAttributes(settings string) string {
	p := ""
	for _, line := range strings.Split(settings, "\n") {
		if k, v, ok := strings.Cut(line, " "); ok && strings.EqualFold(k, "core.attributesfile") {
			p = v
		}
	}
	home, _ := os.UserHomeDir()
	switch {
	case strings.HasPrefix(p, "~/"):
		p = filepath.Join(home, p[2:])
	case p == "" && os.Getenv("XDG_CONFIG_HOME") != "":
		p = filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "attributes")
	case p == "":
		p = filepath.Join(home, ".config", "git", "attributes")
	}
	data, _ := os.ReadFile(p)
	return "\x00" + os.Getenv("GIT_LFS_SKIP_SMUDGE") + "\x00" + string(data)
}
