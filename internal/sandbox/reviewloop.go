package sandbox

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/audit"
	"github.com/litterbox-dev/litterbox/internal/reviewstate"
)

// Review is where a sandbox's work stands in the review loop, as list and
// the agent's sandbox-list show it: working, ready, rejected or taken,
// with the latest summary or reason and who gave it.
type Review struct {
	State string `json:"state"`
	// Mark is the last change of state a person or the agent made, which
	// State differs from when the work went on after it (commits since a
	// ready or a taken; a rejection the agent was told of).
	Mark    string    `json:"mark,omitempty"`
	Message string    `json:"message,omitempty"`
	By      string    `json:"by,omitempty"`
	At      time.Time `json:"at,omitzero"`
}

// reviewOf is sandbox slug's review with its branch at tip.
func (m *Manager) reviewOf(slug, tip string) *Review {
	mark, err := reviewstate.Load(m.Repo.Layout().Review(slug))
	if err != nil {
		return &Review{State: reviewstate.Working, Message: "unreadable review state: " + err.Error()}
	}
	return &Review{State: mark.Now(tip), Mark: mark.State, Message: mark.Message, By: mark.By, At: mark.At}
}

// MarkReady records the agent's word that sandbox name's work is ready
// for review, with its summary, at the branch's tip now.
func (m *Manager) MarkReady(ctx context.Context, name, summary string) (Review, error) {
	return m.mark(ctx, name, reviewstate.Ready, reviewstate.ByAgent, summary)
}

// Reject sends sandbox name's work back to its agent with why; the agent
// reads it at the head of its next tool result and in sandbox-list.
func (m *Manager) Reject(ctx context.Context, name, why string) (Review, error) {
	if strings.TrimSpace(why) == "" {
		return Review{}, fmt.Errorf("a rejection needs its reason, for the agent to act on: litterbox reject NAME -m \"what to change\"")
	}
	return m.mark(ctx, name, reviewstate.Rejected, reviewstate.ByPerson, why)
}

// ReviewerVerdict records a reviewer agent's findings on sandbox name:
// approved, the work is ready for the person; else it goes back to its
// agent as a person's rejection does.
func (m *Manager) ReviewerVerdict(ctx context.Context, name string, approve bool, notes string) (Review, error) {
	state := reviewstate.Rejected
	if approve {
		state = reviewstate.Ready
	}
	return m.mark(ctx, name, state, reviewstate.ByReviewer, notes)
}

// markTaken records that an apply took sandbox slug's work up to tip.
func (m *Manager) markTaken(slug, tip string) {
	_ = m.save(slug, reviewstate.Mark{State: reviewstate.Taken, By: reviewstate.ByPerson, Tip: tip, At: time.Now().UTC(), Message: "applied"})
}

func (m *Manager) mark(ctx context.Context, name, state, by, message string) (Review, error) {
	slug, _, tip, err := m.Repo.BaseAndTip(ctx, name)
	if err != nil {
		return Review{}, err
	}
	mark := reviewstate.Mark{State: state, By: by, Tip: tip, At: time.Now().UTC(), Message: agenttext.Cap(strings.TrimSpace(message), reviewstate.MaxMessage)}
	if err := m.save(slug, mark); err != nil {
		return Review{}, fmt.Errorf("recording sandbox '%s' as %s: %w", slug, state, err)
	}
	return Review{State: state, Mark: state, Message: mark.Message, By: by, At: mark.At}, nil
}

// save writes the mark and adds the change of state to the audit log.
func (m *Manager) save(slug string, mark reviewstate.Mark) error {
	if err := reviewstate.Save(m.Repo.Layout().Review(slug), mark); err != nil {
		return err
	}
	return m.Repo.AppendAudit(audit.Entry{
		Time: mark.At, Tool: "review-state", Sandbox: slug, Status: "ok", PID: os.Getpid(),
		Arguments: map[string]any{"state": mark.State, "by": mark.By, "message": mark.Message, "tip": mark.Tip},
	})
}

// Rejection is the reason sandbox slug's work was sent back and who sent
// it (a person or a reviewer), if its agent has not been told yet; it is
// then marked told, so an agent reads it at the head of one tool result,
// not of every one.
func (m *Manager) Rejection(slug string) (why, by string) {
	path := m.Repo.Layout().Review(slug)
	mark, err := reviewstate.Load(path)
	if err != nil || mark.State != reviewstate.Rejected || mark.Told {
		return "", ""
	}
	mark.Told = true
	if reviewstate.Save(path, mark) != nil {
		return "", ""
	}
	return mark.Message, mark.By
}
