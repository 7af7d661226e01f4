package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// MilestoneResult says what a milestone squashed.
type MilestoneResult struct {
	Commit   string `json:"commit"`
	Squashed int    `json:"squashed"`
}

func milestoneRef(slug string) string { return "refs/litterbox/" + slug + "/milestone" }

// Milestone squashes every snapshot since the last milestone (or the base)
// into one commit with message; the tree stays the same.
func (m *Agent) Milestone(ctx context.Context, name, message string) (*MilestoneResult, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(message) == "" {
		return nil, errors.New("message is empty")
	}
	if len(message) > agenttext.MaxMessage {
		return nil, fmt.Errorf("message is %d bytes, over the %d a milestone message may hold: shorten it to a summary", len(message), agenttext.MaxMessage)
	}
	unlock, err := m.Repo.Lock(layout.WithCall(ctx, "milestone: "+agenttext.FirstLine(message)), slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	n := m.Repo.Names(slug)
	tip, err := m.Repo.Git.RevParse(ctx, n.Ref)
	if err != nil {
		return nil, err
	}
	if tip == "" {
		return nil, m.Repo.MissingBranch(ctx, slug)
	}
	lastMilestone, err := m.Repo.Git.RevParse(ctx, milestoneRef(slug))
	if err != nil {
		return nil, err
	}
	since := lastMilestone
	if since == "" {
		rec, err := m.Repo.Store().Load(slug)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, m.Repo.NotFound(ctx, slug)
		}
		since = rec.Base
	}
	count, err := m.Repo.Git.Count(ctx, since, tip)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, errors.New("no snapshots since the last milestone; nothing to squash")
	}
	tree, err := m.Repo.Git.RevParse(ctx, tip+"^{tree}")
	if err != nil {
		return nil, err
	}
	msg, err := m.milestoneMessage(ctx, slug, message)
	if err != nil {
		return nil, err
	}
	id, err := m.Repo.Git.CommitTree(ctx, commitSpec(tree, since, msg, m.Repo.AgentIdent(slug), m.Repo.Committer(ctx, slug)))
	if err != nil {
		return nil, err
	}
	if err := m.Repo.Git.UpdateRef(ctx, n.Ref, id, tip, "litterbox milestone"); err != nil {
		return nil, err
	}
	if err := m.Repo.Git.UpdateRef(ctx, milestoneRef(slug), id, lastMilestone, "litterbox milestone"); err != nil {
		return nil, err
	}
	if st, err := m.Repo.LoadSnap(slug); err == nil && st.Tip == tip {
		st.Tip = id
		_ = m.Repo.SaveSnap(slug, st)
	}
	return &MilestoneResult{Commit: id, Squashed: count}, nil
}

func commitSpec(tree, parent, msg string, author, committer gitcli.Ident) gitcli.CommitSpec {
	return gitcli.CommitSpec{Tree: tree, Parents: []string{parent}, Message: msg, Author: author, Committer: committer}
}

// milestoneMessage is message as the branch keeps it: the values of the
// sandbox's secrets masked, and what a terminal would act on written out
// as escapes, as in snapshot messages.
func (m *Agent) milestoneMessage(ctx context.Context, slug, message string) (string, error) {
	rec, err := m.Repo.Store().Load(slug)
	if err != nil {
		return "", err
	}
	if rec == nil {
		return "", m.Repo.NotFound(ctx, slug)
	}
	_, specs, _ := m.CallConfig(ctx, rec)
	sec, err := m.Repo.Secrets.Resolve(ctx, specs)
	if err != nil {
		return "", fmt.Errorf("%w (the milestone was not made)", err)
	}
	return agenttext.Inert(sec.Redact(strings.TrimSpace(message))) + "\n", nil
}
