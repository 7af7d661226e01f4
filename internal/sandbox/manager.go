// Package sandbox is the lifecycle of Litterbox's sandboxes after create
// (list, pause, resume, review, delete), over a repository on the host
// (internal/hostrepo), what an agent does in one (internal/agent) and the
// making of them (internal/create).
package sandbox

import (
	"context"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/runner"
)

// Manager runs the sandbox lifecycle for one repository.
type Manager struct {
	// Agent is what an agent does in these sandboxes.
	Agent *agent.Agent
	// Repo is the repository on the host whose sandboxes these are.
	Repo *hostrepo.Repo
	// Creator makes them, forks them and keeps the warm pool.
	Creator *create.Creator
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

// New is the Manager of repo.
func New(repo *hostrepo.Repo) *Manager {
	a := &agent.Agent{Repo: repo}
	return &Manager{Agent: a, Repo: repo, Creator: &create.Creator{Repo: repo, Agent: a}}
}

// Create makes a sandbox (see create.Creator.Create).
func (m *Manager) Create(ctx context.Context, opts create.CreateOptions) (*create.Created, error) {
	return m.Creator.Create(ctx, opts)
}

// Images builds and reads this repository's images.
func (m *Manager) Images() *image.Builder { return m.Creator.Images() }

// Proxies are the egress proxies of this repository's sandboxes.
func (m *Manager) Proxies() *egressproxy.Proxies { return m.Creator.Proxies() }
