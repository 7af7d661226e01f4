// Package sandbox is the lifecycle of Litterbox's sandboxes (create, fork,
// list, pause, resume, delete) and what an agent does in one, over a
// repository on the host (internal/hostrepo) and a container Provider.
package sandbox

import (
	"context"
	"io"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/internal/setupcache"
	"github.com/litterbox-dev/litterbox/runner"
)

// Manager runs the sandbox lifecycle for one repository.
type Manager struct {
	// Agent is what an agent does in these sandboxes.
	Agent *agent.Agent
	// Repo is the repository on the host whose sandboxes these are.
	Repo *hostrepo.Repo

	// BuildOutput, when set, receives a project image's build log as it
	// is made (a terminal); otherwise only a failed build's tail is shown.
	BuildOutput io.Writer
	// portStart and portFree, when set, replace the random start of the
	// port search and the host check (tests need the same ports every run).
	portStart func(span int) int
	portFree  func(port int) bool
	// Refill, when set, starts filling the warm pool apart from the
	// caller (the CLI starts `litterbox pool fill` detached) after a
	// create that may have taken an entry.
	Refill func()
}

// OpenRepo is Open with the configuration of the repository's config files,
// read again by every create.
func OpenRepo(ctx context.Context, r runner.Runner, rt engine.Runtime, loc hostrepo.Location) (*Manager, error) {
	repo, err := hostrepo.OpenRepo(ctx, r, rt, loc)
	if err != nil {
		return nil, err
	}
	return New(repo), nil
}

// Open finds the repository at or above dir and returns its Manager, using the
// runtime through r.
func Open(ctx context.Context, r runner.Runner, rt engine.Runtime, dir string, cfg config.Config) (*Manager, error) {
	repo, err := hostrepo.Open(ctx, r, rt, dir, cfg)
	if err != nil {
		return nil, err
	}
	return New(repo), nil
}

// New is the Manager of repo, whose calls start again a sandbox
// that stopped for being idle.
func New(repo *hostrepo.Repo) *Manager {
	m := &Manager{Agent: &agent.Agent{Repo: repo}, Repo: repo}
	m.Agent.Wake = func(ctx context.Context, slug string) error {
		_, err := m.Resume(ctx, slug)
		return err
	}
	return m
}

// Images builds and reads this repository's images, its build log going
// where BuildOutput says.
func (m *Manager) Images() *image.Builder {
	return &image.Builder{Repo: m.Repo, Output: m.BuildOutput}
}

// SetupCache is this repository's setup cache.
func (m *Manager) SetupCache() *setupcache.Cache {
	return &setupcache.Cache{Agent: m.Agent, Images: m.Images()}
}

// Proxies are the egress proxies of this repository's sandboxes.
func (m *Manager) Proxies() *egressproxy.Proxies { return &egressproxy.Proxies{Agent: m.Agent} }
