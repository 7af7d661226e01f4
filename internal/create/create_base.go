package create

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/basetree"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// Bases are the base trees this repository's sandboxes are made over.
func (m *Creator) Bases() basetree.Trees { return basetree.Trees{Repo: m.Repo} }

// overBase reports whether /src can lie over a base tree shared with
// other sandboxes: on an engine that makes such volumes, for the files of
// a commit of the user's (an agent's commit is copied under the attributes
// of the user's work tree, which may change), in a box made now (a pool
// entry's volumes were made before its base was known), with no kept path
// mounted inside /src (which the tree's files there would lie under).
func (c *creation) overBase() bool {
	return box.Overlays(c.m.Repo.Provider) != nil && c.opts.fork == nil &&
		!c.agentBase && !c.fill && c.cfg.PoolSize == 0 && len(c.cfg.SetupKeep) == 0
}

// layerFiles makes the base tree when it is the first sandbox of its
// commit, then this sandbox's /src volume over it, before the box that
// mounts it: the files' copy then costs nothing for every sandbox after
// the first. The record names the tree before any prune can look.
func (c *creation) layerFiles(ctx context.Context) error {
	if !c.overBase() {
		return nil
	}
	m, n := c.m, c.n
	t := time.Now()
	settings, err := m.Repo.Git.CopySettings(ctx)
	if err != nil {
		return &hostrepo.StepError{Step: "reading git's settings", Err: err}
	}
	key := basetree.Key(c.base, c.uid, c.gid, settings+userAttributes(settings))
	layer := &layout.Layer{Upper: n.Volume + "-upper", Work: n.Volume + "-work"}
	hold := func(tr basetree.Tree) error {
		layer.Base = tr.Volume
		c.rec.Layer = layer
		return m.Repo.Store().Save(c.rec)
	}
	made := false
	for try := 0; ; try++ {
		src := basetree.Source{Key: key, Commit: c.base, Image: c.cfg.Image, User: fmt.Sprintf("%d:%d", c.uid, c.gid), Fill: c.fillBase}
		tree, madeNow, err := m.Bases().Use(ctx, src, hold)
		if err != nil {
			return &hostrepo.StepError{Step: "making the base tree of " + hostrepo.ShortID(c.base), Err: err}
		}
		c.tree, made = &tree, made || madeNow
		err = box.Overlays(m.Repo.Provider).OverlayVolume(ctx, box.Overlay{
			Name: n.Volume, Lower: tree.Volume, Upper: layer.Upper, Work: layer.Work, Labels: m.Repo.Labels(n.Slug, "true"),
		})
		if errors.Is(err, box.ErrNoSuchVolume) && !madeNow && try == 0 {
			// The engine lost the tree's volume: made again, once.
			if err := m.Bases().Forget(key); err != nil {
				return &hostrepo.StepError{Step: "forgetting the lost base tree " + tree.Volume, Err: err}
			}
			continue
		}
		if err != nil {
			return &hostrepo.StepError{Step: "making " + hostrepo.Workdir + " over base tree " + tree.Volume, Err: err}
		}
		break
	}
	how := "shared"
	if made {
		how = "made"
	}
	c.step("base tree "+hostrepo.ShortID(c.base)+" "+how, t)
	return nil
}

// removeLayer removes the sandbox's /src volume and its own layers, when
// the box's undo has not (the box was never made).
func (c *creation) removeLayer(ctx context.Context) []string {
	if c.rec == nil || c.rec.Layer == nil {
		return nil
	}
	var left []string
	for _, v := range []string{c.n.Volume, c.rec.Layer.Upper, c.rec.Layer.Work} {
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
// other volumes given to the sandbox user, the rules mirror copied from
// the tree's.
func (c *creation) fillOverBase(ctx context.Context) error {
	m, n := c.m, c.n
	if err := m.prepareVolumes(ctx, n, ownVolumes(n, c.cfg.SetupKeep), c.uid); err != nil {
		return err
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
