// Package milestone is what an agent marks on its sandbox's branch: a
// milestone squashes the snapshots since the last one into one commit, and
// the agent's diff tells what the branch changed since its base or its
// last milestone. Both read and write only the host repository.
package milestone

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/result"
)

func milestoneRef(slug string) string { return "refs/litterbox/" + slug + "/milestone" }

// Make squashes every snapshot since the last milestone (or the base)
// into one commit with message; the tree stays the same.
func Make(ctx context.Context, r *hostrepo.Repo, name, message string) (*result.Milestone, error) {
	slug, err := r.Resolve(name)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(message) == "" {
		return nil, errors.New("message is empty")
	}
	if len(message) > agenttext.MaxMessage {
		return nil, fmt.Errorf("message is %d bytes, over the %d a milestone message may hold: shorten it to a summary", len(message), agenttext.MaxMessage)
	}
	unlock, err := r.Lock(layout.WithCall(ctx, "milestone: "+agenttext.FirstLine(message)), slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	n := r.Names(slug)
	tip, err := r.Git.RevParse(ctx, n.Ref)
	if err != nil {
		return nil, err
	}
	if tip == "" {
		return nil, r.MissingBranch(ctx, slug)
	}
	lastMilestone, err := r.Git.RevParse(ctx, milestoneRef(slug))
	if err != nil {
		return nil, err
	}
	since := lastMilestone
	if since == "" {
		rec, err := r.Store().Load(slug)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, r.NotFound(ctx, slug)
		}
		since = rec.Base
	}
	count, err := r.Git.Count(ctx, since, tip)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, errors.New("no snapshots since the last milestone; nothing to squash")
	}
	tree, err := r.Git.RevParse(ctx, tip+"^{tree}")
	if err != nil {
		return nil, err
	}
	msg, err := keptMessage(ctx, r, slug, message)
	if err != nil {
		return nil, err
	}
	id, err := r.Git.CommitTree(ctx, commitSpec(tree, since, msg, r.AgentIdent(slug), r.Committer(ctx, slug)))
	if err != nil {
		return nil, err
	}
	if err := r.Git.UpdateRef(ctx, n.Ref, id, tip, "litterbox milestone"); err != nil {
		return nil, err
	}
	if err := r.Git.UpdateRef(ctx, milestoneRef(slug), id, lastMilestone, "litterbox milestone"); err != nil {
		return nil, err
	}
	if st, err := r.LoadSnap(slug); err == nil && st.Tip == tip {
		st.Tip = id
		_ = r.SaveSnap(slug, st)
	}
	return &result.Milestone{Commit: id, Squashed: count}, nil
}

func commitSpec(tree, parent, msg string, author, committer gitcli.Ident) gitcli.CommitSpec {
	return gitcli.CommitSpec{Tree: tree, Parents: []string{parent}, Message: msg, Author: author, Committer: committer}
}

// keptMessage is message as the branch keeps it: the values of the
// sandbox's secrets masked, and what a terminal would act on written out
// as escapes, as in snapshot messages.
func keptMessage(ctx context.Context, r *hostrepo.Repo, slug, message string) (string, error) {
	rec, err := r.Store().Load(slug)
	if err != nil {
		return "", err
	}
	if rec == nil {
		return "", r.NotFound(ctx, slug)
	}
	_, specs, _ := r.CallConfig(ctx, rec)
	sec, err := r.Secrets.Resolve(ctx, specs)
	if err != nil {
		return "", fmt.Errorf("%w (the milestone was not made)", err)
	}
	return agenttext.Inert(sec.Redact(strings.TrimSpace(message))) + "\n", nil
}
