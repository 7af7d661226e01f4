// Package reviewstate keeps where a sandbox's work stands in the review
// loop between its agent and a person: working, ready (the agent says it
// is done, with a summary), rejected (a person sent it back, with the
// reason) or taken (applied). One small file per sandbox in the
// repository's Litterbox state holds the last mark and the branch tip it
// was made at.
package reviewstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/litterbox-dev/litterbox/internal/layout"
)

// The states a sandbox's work is in.
const (
	Working  = "working"
	Ready    = "ready"
	Rejected = "rejected"
	Taken    = "taken"
)

// Who made a mark.
const (
	ByAgent  = "agent"
	ByPerson = "person"
	// ByReviewer: a reviewer agent (litterbox mcp --review).
	ByReviewer = "reviewer"
)

// MaxMessage bounds a summary or a reason, in bytes: it is shown at the
// head of an agent's tool result and in every list.
const MaxMessage = 4096

// Mark is the last change of state: what it was, its message, who made
// it, and the branch's tip then.
type Mark struct {
	State   string    `json:"state"`
	Message string    `json:"message,omitempty"`
	By      string    `json:"by,omitempty"`
	Tip     string    `json:"tip,omitempty"`
	At      time.Time `json:"at,omitzero"`
	// Told: the agent has been shown this rejection at the head of a
	// tool result, which it is only once.
	Told bool `json:"told,omitempty"`
}

// Now is where the work stands now, with the branch at tip. Work marked
// ready or taken that has commits since is being worked on again, and so
// is a rejection the agent has been told of.
func (m Mark) Now(tip string) string {
	switch {
	case m.State == "":
		return Working
	case (m.State == Ready || m.State == Taken) && tip != m.Tip:
		return Working
	case m.State == Rejected && m.Told:
		return Working
	}
	return m.State
}

// Load reads the mark at path; a sandbox with none is working.
func Load(path string) (Mark, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Mark{}, nil
	}
	if err != nil {
		return Mark{}, err
	}
	var m Mark
	if err := json.Unmarshal(data, &m); err != nil {
		return Mark{}, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Save writes m to path whole or not at all.
func Save(path string, m Mark) error {
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return layout.WriteFileAtomic(path, data)
}
