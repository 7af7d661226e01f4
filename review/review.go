// Package review shows and accepts a sandbox's work on the host: diff, log,
// and apply (git format-patch | git am -3, or one combined change). It runs
// git in the user's repository the way the user would, with the user's
// config, identity and hooks; only Apply changes the work tree, and it
// refuses to overwrite uncommitted work.
package review

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/runner"
)

// Work is one sandbox's commits: base..Tip in the repository Git runs in.
type Work struct {
	Name      string
	Base, Tip string
}

// Diff shows base..tip with extra git diff arguments (--stat, paths).
func Diff(ctx context.Context, g *gitcli.Client, w Work, extra []string, stdout, stderr io.Writer) error {
	return quietExit(g.Stream(ctx, nil, stdout, stderr, append([]string{"diff", w.Base, w.Tip}, PathsAfterDashes(extra)...)...))
}

// Log shows the commits since the base; patch adds each diff.
func Log(ctx context.Context, g *gitcli.Client, w Work, patch bool, extra []string, stdout, stderr io.Writer) error {
	args := []string{"log"}
	if patch {
		args = append(args, "-p")
	}
	args = append(args, w.Base+".."+w.Tip)
	return quietExit(g.Stream(ctx, nil, stdout, stderr, append(args, PathsAfterDashes(extra)...)...))
}

// PathsAfterDashes puts "--" before the first argument that is not an
// option, so a path that exists only on the sandbox's branch is not taken
// for a revision.
func PathsAfterDashes(args []string) []string {
	for i, a := range args {
		if a == "--" {
			return args
		}
		if !strings.HasPrefix(a, "-") {
			return append(append(append([]string{}, args[:i]...), "--"), args[i:]...)
		}
	}
	return args
}

// quietExit turns a git failure whose message already went to the user's
// stderr into a short error.
func quietExit(err error) error {
	if ee, ok := runner.AsExit(err); ok {
		return fmt.Errorf("`%s` exited with code %d", runner.Verb(ee.Cmd), ee.Result.ExitCode)
	}
	return err
}

// DirtyError refuses an apply that would clobber uncommitted host changes.
type DirtyError struct {
	Staged bool
	Paths  []string
}

func (e *DirtyError) Error() string {
	if e.Staged {
		return "the index has staged changes, and git am needs a clean index; commit or stash them first (git stash)"
	}
	return fmt.Sprintf("uncommitted changes in %s would be overwritten; commit or stash them first (git stash -u)", strings.Join(e.Paths, ", "))
}

// ConflictError says how to finish or back out of a stopped apply.
type ConflictError struct {
	Squash bool
	Err    error
}

func (e *ConflictError) Error() string {
	if e.Squash {
		return "the combined change does not apply cleanly; conflicts are marked in the work tree. Resolve them and commit, or back out with: git reset --merge"
	}
	return "git am stopped on a conflict (the sandbox and its branch are untouched). Resolve the files, git add them, then git am --continue; or back out with: git am --abort"
}

func (e *ConflictError) Unwrap() error { return e.Err }

// Options are the inputs of Apply.
type Options struct {
	// Tip, when set, is the branch tip the user reviewed: a branch that
	// has moved since is refused rather than applied unseen.
	Tip    string
	Squash bool
	// AmArgs are passed to git am (or git apply with Squash).
	AmArgs         []string
	Stdout, Stderr io.Writer
}

// Applied says what Apply brought over.
type Applied struct {
	Name    string `json:"name"`
	Commits int    `json:"commits"`
	Squash  bool   `json:"squash"`
}

// Apply brings the sandbox's commits onto the current branch with git
// format-patch | git am -3 (authorship and messages kept), or with Squash
// stages the combined change without committing. The sandbox stays.
func Apply(ctx context.Context, g *gitcli.Client, w Work, o Options) (*Applied, error) {
	slug, base, tip := w.Name, w.Base, w.Tip
	count, err := g.Count(ctx, base, tip)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, fmt.Errorf("sandbox '%s' has no commits since its base; nothing to apply", slug)
	}
	if err := checkClean(ctx, g, base, tip); err != nil {
		return nil, err
	}
	stderr := o.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	stdout := o.Stdout
	if stdout == nil {
		stdout = io.Discard
	}
	pr, pw := io.Pipe()
	produce := func(args ...string) chan error {
		done := make(chan error, 1)
		go func() {
			err := g.Stream(ctx, nil, pw, stderr, args...)
			pw.CloseWithError(err)
			done <- err
		}()
		return done
	}
	var applyErr error
	var done chan error
	if o.Squash {
		done = produce("diff", "--binary", "--full-index", base, tip)
		applyErr = g.Stream(ctx, pr, stdout, stderr, append([]string{"apply", "--index", "--3way"}, o.AmArgs...)...)
	} else {
		done = produce("format-patch", "--stdout", "--binary", "--full-index", base+".."+tip)
		applyErr = g.Stream(ctx, pr, stdout, stderr, append([]string{"am", "-3"}, o.AmArgs...)...)
	}
	pr.CloseWithError(errors.New("apply ended"))
	if err := <-done; err != nil && applyErr == nil {
		return nil, err
	}
	if applyErr != nil {
		// Only a stop that left git's conflict state gets the continue or
		// abort advice; any other failure changed nothing and says so.
		if conflictLeft(ctx, g, o.Squash) {
			return nil, &ConflictError{Squash: o.Squash, Err: applyErr}
		}
		return nil, fmt.Errorf("applying sandbox '%s' failed; your branch, index and work tree are unchanged: %w", slug, applyErr)
	}
	return &Applied{Name: slug, Commits: count, Squash: o.Squash}, nil
}

// conflictLeft reports whether a failed apply left git in its conflict state:
// an am session, or (for --squash) unmerged index entries.
func conflictLeft(ctx context.Context, g *gitcli.Client, squash bool) bool {
	ctx = context.WithoutCancel(ctx)
	if squash {
		out, err := g.Output(ctx, "diff", "--name-only", "--diff-filter=U")
		return err == nil && out != ""
	}
	dir, err := g.Output(ctx, "rev-parse", "--git-path", "rebase-apply")
	if err != nil {
		return false
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(g.Dir, dir)
	}
	_, err = os.Stat(dir)
	return err == nil
}

// checkClean refuses when git am would fail on, or overwrite, the user's
// uncommitted work: a staged change anywhere, or an unstaged or untracked one
// on a path the sandbox changed.
func checkClean(ctx context.Context, g *gitcli.Client, base, tip string) error {
	if out, err := g.Output(ctx, "diff", "--cached", "--name-only"); err != nil {
		return err
	} else if out != "" {
		return &DirtyError{Staged: true}
	}
	// -z: paths exactly as they are (no quoting of spaces or non-ASCII).
	touchedOut, err := g.Output(ctx, "diff", "-z", "--name-only", "--no-renames", base, tip)
	if err != nil {
		return err
	}
	touched := map[string]bool{}
	for _, p := range strings.Split(touchedOut, "\x00") {
		if p != "" {
			touched[p] = true
		}
	}
	dirtyOut, err := g.Output(ctx, "status", "--porcelain", "-z", "--no-renames", "--untracked-files=all")
	if err != nil {
		return err
	}
	var paths []string
	for _, rec := range strings.Split(dirtyOut, "\x00") {
		if len(rec) > 3 && touched[rec[3:]] {
			paths = append(paths, rec[3:])
		}
	}
	if len(paths) > 0 {
		return &DirtyError{Paths: paths}
	}
	return nil
}
