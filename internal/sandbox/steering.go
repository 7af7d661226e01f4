package sandbox

import (
	"context"
	"path"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/steering"
)

// ControlChanges lists the files the sandbox's branch changes (since its
// base) that steer sandboxes or programs on the host: review shows them
// before anything else, and merge asks first. tip is the branch tip they
// were read from, for Options.Tip.
func (m *Manager) ControlChanges(ctx context.Context, name string) (cs []steering.Change, tip string, err error) {
	w, err := m.work(ctx, name)
	if err != nil {
		return nil, "", err
	}
	out, err := m.Repo.Git.Output(ctx, "diff", "--name-only", "-z", "--no-renames", w.Base, w.Tip, "--")
	if err != nil {
		return nil, "", err
	}
	named := m.steeringNamed(ctx)
	for _, p := range strings.Split(out, "\x00") {
		if what := steering.What(p, named); p != "" && what != "" {
			cs = append(cs, steering.Change{Path: p, What: what})
		}
	}
	return cs, w.Tip, nil
}

// steeringNamed are the paths of the work tree that this repository's
// settings make steer the host: those its git config points at (one
// `git config --list`), and the build's Dockerfile and .dockerignore.
// A setting that cannot be read names nothing; the fixed list still holds.
func (m *Manager) steeringNamed(ctx context.Context) map[string]string {
	named := map[string]string{}
	if listing, err := m.Repo.Git.Output(ctx, "config", "--list", "-z", "--show-origin"); err == nil {
		named = steering.GitConfig(listing, m.Repo.Root)
	}
	if cfg, err := m.Repo.CreateConfig(); err == nil && cfg.Build != nil {
		named[cfg.Build.Dockerfile] = steering.SteersBuild
		named[path.Join(cfg.Build.Context, ".dockerignore")] = steering.SteersBuild
	}
	return named
}
