package create

import (
	"context"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// ownVolumes are a sandbox's named volumes: /src, then the home, then one
// per [setup] keep path. All but /src hold what a setup puts outside the
// repository (a module cache, a pip --user install), which so lives as
// long as the sandbox, goes with a fork and into the setup cache.
func ownVolumes(n hostrepo.Names, keep []string) []box.Mount {
	v := []box.Mount{{Volume: n.Volume, Target: hostrepo.Workdir}, {Volume: n.Container + "-home", Target: config.Home}}
	for _, p := range keep {
		v = append(v, box.Mount{Volume: n.Container + "-keep-" + hostrepo.KeepID(p), Target: p})
	}
	return v
}

// targets are the mount points of vols.
func targets(vols []box.Mount) []string {
	out := make([]string, len(vols))
	for i, v := range vols {
		out[i] = v.Target
	}
	return out
}

// ExtraVolumes are the names of a sandbox's volumes besides /src: those
// its record lists, or, without a record, its home's and those the engine
// finds by its labels (Podman's volumes have none).
func (m *Creator) ExtraVolumes(ctx context.Context, n hostrepo.Names, rec *layout.Record) []string {
	if rec != nil {
		var out []string
		for _, v := range rec.Volumes {
			out = append(out, v.Volume)
		}
		if rec.Layer != nil {
			out = append(out, rec.Layer.Own()...)
		}
		return out
	}
	out := []string{n.Container + "-home"}
	found, _ := m.Repo.Provider.Volumes(ctx, map[string]string{hostrepo.LabelManaged: "true", hostrepo.LabelRepoID: m.Repo.RepoID, hostrepo.LabelSandbox: n.Slug})
	for _, v := range found {
		if v != n.Volume && v != out[0] {
			out = append(out, v)
		}
	}
	return out
}
