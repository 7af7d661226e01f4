package hostrepo

import (
	"context"
	"fmt"
)

// Provenance: a commit is a person's when one of the user's own refs
// reaches it: HEAD, a branch that is not a sandbox's (litterbox/*), a tag,
// a remote-tracking branch. Everything else an agent made: its sandbox's
// branch, and what it reaches through that alone. A commit is a person's
// once they have taken it (apply, merge, a branch of their own at it), so
// a reviewed change counts and an unreviewed one never does, whatever its
// content. Every privileged step (the setup's network, writing a setup
// cache entry, a build's network) takes only a person's commits; this is
// the one place that says whose a commit is.

// agentBranches are the sandboxes' branches, as --exclude takes them
// before --branches.
const agentBranches = "litterbox/*"

// PersonsArgs lists the first commit of commit's history that no ref of
// the user's reaches; nothing when one reaches commit.
func PersonsArgs(commit string) []string {
	return []string{"rev-list", "--max-count=1", commit, "--not", "HEAD", "--exclude=" + agentBranches, "--branches", "--tags", "--remotes"}
}

// Persons reports whether one of the user's own refs reaches commit (a
// full id).
func (r *Repo) Persons(ctx context.Context, commit string) (bool, error) {
	out, err := r.Git.Output(ctx, PersonsArgs(commit)...)
	if err != nil {
		return false, fmt.Errorf("asking whose commit %s is: %w", ShortID(commit), err)
	}
	return out == "", nil
}
