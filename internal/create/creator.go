// Package create makes sandboxes: a create is a list of named steps, each
// with the undo that takes away what it made (steps.go), and /src comes
// from one source plugged into that list (create_files.go). The warm pool,
// forks, the limits a create checks and the ports it publishes live here
// too. The lifecycle after create (internal/sandbox) builds on it.
package create

import (
	"io"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/setupcache"
)

// Creator makes the sandboxes of one repository.
type Creator struct {
	// Repo is the repository on the host whose sandboxes these are.
	Repo *hostrepo.Repo
	// Agent gives the helper a create delivers and starts services with.
	Agent *agent.Agent

	// BuildOutput, when set, receives a project image's build log as it
	// is made (a terminal); otherwise only a failed build's tail is shown.
	BuildOutput io.Writer
	// PortStart and PortFree, when set, replace the random start of the
	// port search and the host check (tests need the same ports every run).
	PortStart func(span int) int
	PortFree  func(port int) bool
}

// Images builds and reads this repository's images, its build log going
// where BuildOutput says.
func (m *Creator) Images() *image.Builder {
	return &image.Builder{Repo: m.Repo, Output: m.BuildOutput}
}

// SetupCache is this repository's setup cache.
func (m *Creator) SetupCache() *setupcache.Cache {
	return &setupcache.Cache{Agent: m.Agent, Images: m.Images()}
}

// Proxies are the egress proxies of this repository's sandboxes.
func (m *Creator) Proxies() *egressproxy.Proxies { return &egressproxy.Proxies{Agent: m.Agent} }

// Statuses shown by list.
const (
	StatusActive  = "active"
	StatusPaused  = "paused"
	StatusStopped = "stopped"
	// StatusIdle is a sandbox its PID 1 stopped for being idle; the next
	// call starts it again.
	StatusIdle        = "stopped (idle)"
	StatusFailedSetup = layout.FailedSetup
	StatusMissing     = "missing"
	StatusError       = "error"
	// StatusCreating is a create still under way (its process is alive).
	StatusCreating = "creating"
)
