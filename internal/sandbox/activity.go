package sandbox

import (
	"time"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// Owner kinds: who drives a sandbox.
const (
	OwnerMCP = "mcp" // an MCP server (`litterbox mcp`), for its client
	OwnerRun = "run" // a `litterbox run` session
	OwnerCLI = "cli" // a person's command (`litterbox exec`, ...)
)

// Owner is the process that drives a sandbox: the one whose call or run
// session runs now, or whose call was the last, while it lives.
type Owner struct {
	Kind string `json:"kind"`
	// Client is the MCP client's name, as it told the server (an agent's
	// harness chose it: shown inert).
	Client string `json:"client,omitempty"`
	PID    int    `json:"pid"`
}

// Call is the call a sandbox runs now: its name as the lock's holder
// wrote it ("bash: make test") and since when.
type Call struct {
	Call  string    `json:"call"`
	Since time.Time `json:"since"`
}

// readActivity fills in s's owner, running call and last activity from
// its lock file, which keeps its last holder (one small read, no engine
// or audit log call), and its run session.
func (m *Manager) readActivity(s *Info) {
	s.Agent = m.sessionOf(s.Name)
	h, held := layout.Last(m.Repo.Layout().Lock(s.Name))
	if held {
		s.Call = &Call{Call: h.Call, Since: h.Since}
	} else if h != nil {
		s.LastActivity = h.Ended
	}
	switch {
	case s.Agent != nil:
		s.Owner = &Owner{Kind: OwnerRun, PID: s.Agent.PID}
	case h != nil && (held || hostrepo.ProcessAlive(h.PID)):
		s.Owner = ownerOf(*h)
	}
}

func ownerOf(h layout.Holder) *Owner {
	if h.MCP {
		return &Owner{Kind: OwnerMCP, Client: h.Client, PID: h.PID}
	}
	return &Owner{Kind: OwnerCLI, PID: h.PID}
}
