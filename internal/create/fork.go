package create

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
	"github.com/litterbox-dev/litterbox/internal/volcopy"
)

// ForkOptions are the inputs of Fork.
type ForkOptions struct {
	Source string
	Name   string
	// Network, as CreateOptions.Network.
	Network string
	// Progress, as CreateOptions.Progress.
	Progress func(step string, took time.Duration)
}

// Fork makes a sandbox from another's current state: its branch starts at
// the source's tip, its /src is a copy of the source's volume (ignored
// files such as built dependencies included), its image is the source's
// and the rest of its configuration is what create would use now. The
// source keeps running; it takes no call while its files are copied.
func (m *Creator) Fork(ctx context.Context, opts ForkOptions) (*Created, error) {
	src, err := m.Repo.Resolve(opts.Source)
	if err != nil {
		return nil, err
	}
	if _, err := hostrepo.ParseName(opts.Name); err != nil {
		return nil, err
	}
	n, in, err := m.Repo.OwnContainer(ctx, src)
	if err != nil {
		return nil, err
	}
	rec, err := m.Repo.Store().Load(src)
	if err != nil {
		return nil, err
	}
	if rec == nil || rec.Status == layout.Creating {
		return nil, &hostrepo.NotFoundError{Name: src}
	}
	unlock, err := m.Repo.Lock(ctx, src)
	if err != nil {
		return nil, err
	}
	defer unlock()
	// What background processes changed since the last call is committed
	// on the source first, so the fork's branch and files agree.
	if in.State == box.State("running") {
		if _, err := m.Agent.ActLocked(ctx, src, agent.Action{Op: protocol.OpScan, Message: hostrepo.CommitMessage("fork", "before forking as "+opts.Name)}); err != nil {
			return nil, fmt.Errorf("committing %s's changes before the fork: %w", src, err)
		}
	}
	refs, err := m.Repo.Git.ListRefs(ctx, n.Ref)
	if err != nil {
		return nil, err
	}
	tip := ""
	for _, r := range refs {
		if r.Name == n.Ref {
			tip = r.ID
		}
	}
	if tip == "" {
		return nil, fmt.Errorf("sandbox '%s' has no branch %s to fork", src, n.Branch)
	}
	st, err := m.Repo.LoadSnap(src)
	if err != nil {
		return nil, err
	}
	// A fork is never less isolated than its source.
	isolation := ""
	if rec.Isolation == config.IsolationGVisor {
		isolation = rec.Isolation
	}
	f := &forkSource{
		slug: src, volume: n.Volume, volumes: rec.Volumes, image: rec.Image, tip: tip, base: rec.Base,
		snap: snapshot.State{Submodules: st.Submodules, Prune: st.Prune},
	}
	if rec.Layer != nil && box.Overlays(m.Repo.Provider) != nil {
		// The fork lies over the very tree the source does, so that the
		// source's own layer alone makes it the source's files.
		if key, ok := m.Bases().KeyOf(rec.Layer.Base); ok {
			f.layer, f.treeKey = rec.Layer, key
		}
	}
	return m.Create(ctx, CreateOptions{Name: opts.Name, Network: opts.Network, Isolation: isolation, Progress: opts.Progress, fork: f})
}

// trees are what a fork copies: the source's /src (unless the fork lies
// over the source's base tree: then its layer, see copyJob), and those of
// its other volumes the fork has too (the home; the paths both keep).
func (f *forkSource) trees(keep []string) []volcopy.Tree {
	var t []volcopy.Tree
	if f.layer == nil {
		t = append(t, volcopy.Tree{Dir: hostrepo.Workdir, Volume: f.volume})
	}
	for _, v := range f.volumes {
		if v.Target == config.Home || slices.Contains(keep, v.Target) {
			t = append(t, volcopy.Tree{Dir: v.Target, Volume: v.Volume})
		}
	}
	return t
}

// copyJob is the copy that makes the fork, of container into, the
// source's files: its trees and, over the source's base tree, its layer.
func (f *forkSource) copyJob(into string, keep []string) volcopy.Job {
	j := volcopy.Job{Sandbox: into, Trees: f.trees(keep), IntoSandbox: true}
	if f.layer != nil {
		j.Layer = &volcopy.Layer{Upper: f.layer.Upper, Merged: f.volume}
	}
	return j
}
