package hostrepo

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// LabelRepoID carries the repository's id (see layout.RepoID) on every
// container and volume made since names became unique per repository; its
// absence marks a resource of an older release.
const LabelRepoID = "dev.litterbox.repo-id"

// repoPath is the path that stands for the repository in labels and
// messages: the main work tree's root, as `git worktree list` names it.
func repoPath(root, gitDir, common string) string {
	switch {
	case gitDir == common:
		return root // the main work tree
	case filepath.Base(common) == ".git":
		return filepath.Dir(common)
	}
	return common
}

// ForeignError refuses to act on an engine resource of another repository.
type ForeignError struct {
	Resource string // "container litterbox-app-x"
	Owner    string // the owner's repository path
	// Sandbox is set when this repository has a sandbox of that name (its
	// branch or record), whose own container is then missing.
	Sandbox string
}

func (e *ForeignError) Error() string {
	msg := fmt.Sprintf("%s belongs to %s, not to this repository; nothing was done to it", e.Resource, e.Owner)
	if e.Sandbox != "" {
		msg = fmt.Sprintf("sandbox '%s' is missing here: %s (`litterbox delete %s` removes only this repository's branch and state)", e.Sandbox, msg, e.Sandbox)
	}
	return msg
}

// Owns reports whether the resource named name with these labels is this
// repository's.
func (r *Repo) Owns(ctx context.Context, name string, labels map[string]string) bool {
	if id := labels[LabelRepoID]; id != "" {
		return id == r.RepoID
	}
	// An older release labelled containers with the root of the work tree
	// it ran in, and volumes with no repository at all. The proof is this
	// git dir's record naming the resource, unless the repository the
	// label names has a record naming it too (the original of a copy).
	slug := labels[LabelSandbox]
	if !ParseNameExact(slug) || !recordNames(r.GitDir, slug, name) {
		return false
	}
	repo := labels[LabelRepo]
	if repo == "" || repo == r.RepoPath || repo == r.Root || slices.Contains(r.worktreeRoots(ctx), repo) {
		return true
	}
	return !recordNames(commonDirOf(repo), slug, name)
}

// commonDirOf finds the common git dir of the work tree at root the way git
// does, without running it: .git is that dir, or a file naming a linked
// work tree's git dir, whose commondir file names the common one.
func commonDirOf(root string) string {
	dotgit := filepath.Join(root, ".git")
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return dotgit // a directory, or nothing at all
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return dotgit
	}
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(root, gitDir)
	}
	common, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(common))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}

// recordNames reports whether the sandbox record of slug in gitDir names
// the container or volume name.
func recordNames(gitDir, slug, name string) bool {
	rec, err := layout.New(gitDir).Store().Load(slug)
	if err != nil || rec == nil {
		return false
	}
	return rec.Container == name || rec.Volume == name || slices.ContainsFunc(rec.Volumes, func(v box.Mount) bool { return v.Volume == name })
}

// worktreeRoots are the roots of this repository's work trees, asked once.
func (r *Repo) worktreeRoots(ctx context.Context) []string {
	r.worktreesOnce.Do(func() { r.worktrees, _ = r.Git.WorktreeRoots(ctx) })
	return r.worktrees
}

// Foreign is the refusal for a resource owns rejected.
func Foreign(kind, name string, labels map[string]string) *ForeignError {
	owner := labels[LabelRepo]
	if owner == "" {
		owner = "another repository"
	}
	return &ForeignError{Resource: kind + " " + name, Owner: owner}
}
