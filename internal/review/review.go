// Package review shows and accepts a sandbox's work on the host: diff, log,
// and apply (git cherry-pick of the reviewed commits, or one combined
// change). It runs git in the user's repository with the user's config and
// identity but no hooks; only Apply changes the work tree, it refuses to
// overwrite uncommitted work, and it checks that what it brought is exactly
// the reviewed change.
package review

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/runner"
)

// Work is one sandbox's commits: base..Tip in the repository Git runs in.
type Work struct {
	Name      string
	Base, Tip string
	// Applied is the sandbox commit the last apply ended at ("" if none),
	// kept in the ref AppliedRef.
	Applied, AppliedRef string
}

// Diff shows base..tip with extra git diff arguments (--stat, paths), as
// stored: no textconv or external diff driver (which the branch's
// .gitattributes would choose) stands between the bytes and the reviewer.
func Diff(ctx context.Context, g *gitcli.Client, w Work, extra []string, stdout, stderr io.Writer) error {
	g = Sealed(g)
	return quietExit(g.Stream(ctx, nil, stdout, stderr, append([]string{"diff", "--no-textconv", "--no-ext-diff", w.Base, w.Tip}, PathsAfterDashes(extra)...)...))
}

// Log shows the commits since the base; patch adds each diff, as Diff
// shows it.
func Log(ctx context.Context, g *gitcli.Client, w Work, patch bool, extra []string, stdout, stderr io.Writer) error {
	g = Sealed(g)
	args := []string{"log"}
	if patch {
		args = append(args, "-p", "--no-textconv", "--no-ext-diff")
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
		return "the index has staged changes, and apply needs a clean index; commit or stash them first (git stash)"
	}
	paths := e.Paths
	more := ""
	if len(paths) > 10 {
		paths, more = paths[:10], fmt.Sprintf(" and %d more", len(e.Paths)-10)
	}
	return fmt.Sprintf("uncommitted changes in %s%s would be overwritten; commit or stash them first (git stash -u)", strings.Join(paths, ", "), more)
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
	return "git cherry-pick stopped on a conflict (the sandbox and its branch are untouched). Resolve the files, git add them, then git cherry-pick --continue; or back out with: git cherry-pick --abort"
}

func (e *ConflictError) Unwrap() error { return e.Err }

// Options are the inputs of Apply.
type Options struct {
	// Tip, when set, is the branch tip the user reviewed: a branch that
	// has moved since is refused rather than applied unseen.
	Tip    string
	Squash bool
	// PickArgs are passed to git cherry-pick (--signoff, -x, a strategy
	// option).
	PickArgs       []string
	Stdout, Stderr io.Writer
}

// Applied says what Apply brought over.
type Applied struct {
	Name string `json:"name"`
	// Tip is the sandbox's commit the host now has everything up to.
	Tip     string `json:"tip"`
	Commits int    `json:"commits"`
	Squash  bool   `json:"squash"`
	// Since is the sandbox commit the previous apply ended at, when this
	// one took only what came after it.
	Since string `json:"since,omitempty"`
	// NothingNew: everything up to the tip was applied before; nothing
	// changed.
	NothingNew bool `json:"nothing_new,omitempty"`
	// Pointers are the LFS files written as the pointers the review
	// showed, their objects not being on this machine (apply never
	// fetches them: Sealed).
	Pointers []string `json:"pointers,omitempty"`
}

// Sealed is g for the git commands that show or take an agent's tree
// (diff, log, apply, merge, the check after, the branch's deletion):
// nothing the branch brings chooses a program, a URL or a network for
// the host's git. The settings given here on the command line outrank
// every file git and git-lfs read, the branch's .lfsconfig among them.
//
//   - No hook runs. The branch brings files into the work tree, and with
//     core.hooksPath pointing inside it (.githooks/, .husky/) those files
//     would run as the user. /dev/null is not a directory, so git finds no
//     hook of any name (pre-commit, post-checkout, post-rewrite,
//     reference-transaction, ...).
//   - No transport: protocol.allow=never, so no lazy fetch of a partial
//     clone, no submodule fetch.
//   - git-lfs contacts no server: its endpoint is a file URL under
//     /dev/null, where nothing can be, and a download that fails leaves
//     the pointer as it is (lfs.skipdownloaderrors). A pointer whose
//     object this machine has is filled from it, as before; any other is
//     written as the pointer the review showed, and Apply names it. An
//     .lfsconfig on the branch would otherwise have the user's git-lfs
//     send each pointer's id to the agent's server, and write its answer
//     into the work tree.
func Sealed(g *gitcli.Client) *gitcli.Client {
	if slices.Contains(g.Global, sealConfig[1]) {
		return g
	}
	c := *g
	c.Global = append(append([]string{}, g.Global...), sealConfig...)
	return &c
}

// sealConfig are Sealed's settings, as git's -c options.
var sealConfig = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "protocol.allow=never",
	"-c", "lfs.url=" + NoLFSServer,
	"-c", "lfs.skipdownloaderrors=true",
}

// NoLFSServer is the LFS endpoint of Sealed git: a path under /dev/null,
// which is no directory, so no object can be fetched from it.
const NoLFSServer = "file:///dev/null/litterbox-has-no-lfs-server"

// Apply brings the sandbox's commits onto the current branch as objects
// (git cherry-pick of the reviewed commits: authorship and messages kept,
// and no message text ever read as a patch), or with Squash stages the
// combined change without committing. Only the commits after the previous
// apply (w.Applied) are taken. The outcome is checked against the reviewed
// change before Apply returns, and undone if it differs. No hook runs, and
// the branch's .gitattributes picks no filter or driver (pinAttributes).
// The sandbox stays.
func Apply(ctx context.Context, g *gitcli.Client, w Work, o Options) (*Applied, error) {
	g = Sealed(g)
	if err := checkPickArgs(o.PickArgs); err != nil {
		return nil, err
	}
	attrs, err := attrsFile(ctx, g)
	if err != nil {
		return nil, err
	}
	if err := unpinLeft(attrs); err != nil {
		return nil, err
	}
	if err := checkNoSession(ctx, g, w); err != nil {
		return nil, err
	}
	if err := settlePending(ctx, g, &w); err != nil {
		return nil, err
	}
	p, err := plan(ctx, g, w)
	if err != nil {
		return nil, err
	}
	if p.Commits == 0 {
		if w.Applied != "" {
			return &Applied{Name: w.Name, Tip: w.Tip, Squash: o.Squash, Since: w.Applied, NothingNew: true}, nil
		}
		return nil, fmt.Errorf("sandbox '%s' has no commits since its base; nothing to apply", w.Name)
	}
	touched, err := checkClean(ctx, g, p.From, w.Tip)
	if err != nil {
		return nil, err
	}
	saved, err := g.RevParse(ctx, "HEAD")
	if err != nil {
		return nil, err
	}
	if saved == "" {
		return nil, fmt.Errorf("applying sandbox '%s' needs a commit to apply onto, and HEAD has none; make a first commit", w.Name)
	}
	unpin, err := pinAttributes(ctx, g, attrs, touched)
	if err != nil {
		return nil, fmt.Errorf("not applied: %w", err)
	}
	defer unpin()
	if err := pick(ctx, g, w, p, o, saved); err != nil {
		return nil, err
	}
	if err := Verify(ctx, g, p.From, w.Tip, saved, o.Squash); err != nil {
		clearPending(ctx, g, w)
		return nil, err
	}
	if err := recordApplied(ctx, g, w); err != nil {
		// Unrecorded, the commits would be taken again by the next apply.
		clearPending(ctx, g, w)
		return nil, undo(ctx, g, saved, o.Squash, err)
	}
	clearPending(ctx, g, w)
	a := &Applied{Name: w.Name, Tip: w.Tip, Commits: p.Commits, Squash: o.Squash}
	if w.Applied != "" {
		a.Since = w.Applied
	}
	// The apply is done and recorded; a pointer that cannot be read back
	// is not named, and changes nothing.
	a.Pointers, _ = pointersLeft(ctx, g, saved, o.Squash)
	return a, nil
}

// checkPickArgs refuses the cherry-pick options that would leave the change
// uncommitted (that is --squash) or open an editor on each commit: the check
// after the pick compares commits.
func checkPickArgs(args []string) error {
	for _, a := range args {
		switch a {
		case "-n", "--no-commit", "-e", "--edit":
			return fmt.Errorf("%s is not supported after --; use --squash to stage the change without committing", a)
		}
	}
	return nil
}

// pick runs git cherry-pick of the planned commits, and turns its failure
// into a conflict to resolve, or undoes it. The pick's last commit is noted
// (the pending ref) before git starts, so that an apply killed at any
// point after is settled by the next one, never repeated: the next apply
// records it when the branch holds that commit's pick (settlePending).
func pick(ctx context.Context, g *gitcli.Client, w Work, p Plan, o Options, saved string) error {
	stdout, stderr := orDiscard(o.Stdout), orDiscard(o.Stderr)
	args, last, err := pickArgs(ctx, g, w, p, o)
	if err != nil {
		return err
	}
	if !o.Squash {
		if err := notePending(ctx, g, w, last); err != nil {
			return fmt.Errorf("not applied: noting the apply of sandbox '%s' before it starts: %w", w.Name, err)
		}
	}
	var gitSaid strings.Builder
	err = g.Stream(ctx, nil, stdout, io.MultiWriter(stderr, &lastLines{b: &gitSaid}), args...)
	if err == nil {
		return nil
	}
	// A conflict is git stopping with unmerged paths: the user resolves
	// them, and the pending ref lets the next apply record it. Any other
	// failure (no space, a lock, a permission) is undone, the pick's state
	// with it: files half written must not be committed by following
	// conflict advice.
	if unmergedLeft(ctx, g) {
		return &ConflictError{Squash: o.Squash, Err: err}
	}
	why := fmt.Errorf("applying sandbox '%s' failed, and not on a conflict: %w", w.Name, err)
	if said := strings.TrimSpace(gitSaid.String()); said != "" {
		why = fmt.Errorf("applying sandbox '%s' failed, and not on a conflict: git said %q", w.Name, said)
	}
	err = undoPick(ctx, g, p.From, w.Tip, saved, o.Squash, why)
	if !conflictLeft(ctx, g, false) {
		clearPending(ctx, g, w)
	}
	return err
}

// undoPick puts the branch, index and work tree back at saved after a pick
// that failed (no space, say), git's cherry-pick state with it, keeping
// the user's other uncommitted work. git itself may be unable to (a full
// disk stops it writing its index, and its reset leaves a file it never
// indexed), so the files the pick added (where checkClean found nothing of
// the user's) are removed first, which gives back their space.
func undoPick(ctx context.Context, g *gitcli.Client, from, tip, saved string, squash bool, why error) error {
	ctx = context.WithoutCancel(ctx)
	removed := removeAdded(ctx, g, from, tip, saved)
	back := func() error {
		if !squash && conflictLeft(ctx, g, false) {
			_, err := g.Output(ctx, "cherry-pick", "--abort")
			return err
		}
		_, err := g.Output(ctx, "reset", "-q", "--merge", saved)
		return err
	}
	err := back()
	if err == nil && removed != nil {
		err = removed
	}
	if err != nil {
		return fmt.Errorf("%v; putting your branch back failed too (%v): once the cause is fixed, run git cherry-pick --abort (or, after --squash, git reset --merge %s)", why, err, abbrev(saved))
	}
	return fmt.Errorf("%w; your branch, index and work tree are back at %s", why, abbrev(saved))
}

// removeAdded removes from the work tree the files the reviewed change
// from..tip adds and saved does not have: what a failed pick may have
// written, whole or in part, where checkClean found nothing of the
// user's. It reads git's objects only, which a full disk allows, and
// removes through os.Root, which follows no link out of the work tree.
func removeAdded(ctx context.Context, g *gitcli.Client, from, tip, saved string) error {
	added := func(a, b string) (map[string]bool, error) {
		out, err := g.Output(ctx, "diff-tree", "-r", "-z", "--no-renames", "--name-only", "--diff-filter=A", a, b)
		set := map[string]bool{}
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				set[p] = true
			}
		}
		return set, err
	}
	reviewed, err := added(from, tip)
	if err != nil {
		return err
	}
	absent, err := added(saved, tip)
	if err != nil {
		return err
	}
	top, err := g.Output(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return err
	}
	defer root.Close()
	for p := range reviewed {
		if absent[p] {
			_ = root.Remove(p)
		}
	}
	return nil
}

// lastLines keeps the last line git wrote that says error or fatal, for
// the one-line message of a failed pick.
type lastLines struct{ b *strings.Builder }

func (l *lastLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(string(p), "\n") {
		if strings.HasPrefix(line, "error: ") || strings.HasPrefix(line, "fatal: ") {
			if l.b.Len() == 0 || strings.HasPrefix(line, "error: ") {
				l.b.Reset()
				l.b.WriteString(line)
			}
		}
	}
	return len(p), nil
}

// unmergedLeft reports whether the index holds unmerged paths: a stop on
// a conflict, as opposed to a failure.
func unmergedLeft(ctx context.Context, g *gitcli.Client) bool {
	out, err := g.Output(context.WithoutCancel(ctx), "ls-files", "--unmerged")
	return err == nil && out != ""
}

// checkNoSession refuses to start while git has a cherry-pick in progress
// or its index locked: an earlier apply killed half-way (whose pending
// ref names it), or another git command. It names the state and the one
// command that backs out of it.
func checkNoSession(ctx context.Context, g *gitcli.Client, w Work) error {
	lock, err := g.Output(ctx, "rev-parse", "--git-path", "index.lock")
	if err != nil {
		return err
	}
	if !filepath.IsAbs(lock) {
		lock = filepath.Join(g.Dir, lock)
	}
	_, statErr := os.Stat(lock)
	locked := statErr == nil
	picking := conflictLeft(ctx, g, false)
	if !locked && !picking {
		return nil
	}
	whose := "a git cherry-pick is in progress in this repository"
	if pending, _ := g.RevParse(ctx, pendingRef(w)); pending != "" && w.AppliedRef != "" {
		whose = fmt.Sprintf("an apply of sandbox '%s' was interrupted (its git cherry-pick is still in progress)", w.Name)
	}
	switch {
	case locked && picking:
		return fmt.Errorf("not applied: %s, and git's index is locked (%s, left by a git that was killed, unless one runs now); if no git runs, back out with: rm -f %s && git cherry-pick --abort; then apply again", whose, lock, runner.Quote(lock))
	case locked:
		return fmt.Errorf("not applied: git's index is locked (%s): another git command runs now, or one was killed; if none runs, remove it with: rm -f %s; then apply again", lock, runner.Quote(lock))
	}
	return fmt.Errorf("not applied: %s; back out with: git cherry-pick --abort (or finish it: git cherry-pick --continue); then apply again", whose)
}

// pickArgs is the cherry-pick of the plan. --keep-redundant-commits: a
// commit whose change the host already has is kept as an empty commit
// instead of stopping the pick half-way in a state that looks like a
// conflict (git 2.39 has no --empty=drop for cherry-pick); each reviewed
// commit then lands exactly once, and the check after is unaffected. With
// Squash, one commit of the combined change (the tip's tree on From) is
// picked with --no-commit: one three-way merge, staged. last is the final
// commit picked, for notePending.
func pickArgs(ctx context.Context, g *gitcli.Client, w Work, p Plan, o Options) (args []string, last string, err error) {
	if o.Squash {
		one, err := combined(ctx, g, w, p.From)
		if err != nil {
			return nil, "", err
		}
		return append(append([]string{"cherry-pick", "--no-commit"}, o.PickArgs...), "--end-of-options", one), one, nil
	}
	rev, last := p.From+".."+w.Tip, w.Tip
	if p.Across {
		one, err := combined(ctx, g, w, p.From)
		if err != nil {
			return nil, "", err
		}
		rev, last = one, one
	}
	return append(append([]string{"cherry-pick", "--keep-redundant-commits"}, o.PickArgs...), "--end-of-options", rev), last, nil
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// conflictLeft reports whether a failed apply left git in its conflict state:
// a cherry-pick in progress, or (for --squash) unmerged index entries.
func conflictLeft(ctx context.Context, g *gitcli.Client, squash bool) bool {
	ctx = context.WithoutCancel(ctx)
	if squash {
		out, err := g.Output(ctx, "diff", "--name-only", "--diff-filter=U")
		return err == nil && out != ""
	}
	for _, name := range []string{"CHERRY_PICK_HEAD", "sequencer"} {
		p, err := g.Output(ctx, "rev-parse", "--git-path", name)
		if err != nil {
			return false
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(g.Dir, p)
		}
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}

// checkClean refuses when git cherry-pick would fail on, or overwrite, the user's
// uncommitted work: a staged change anywhere, or an unstaged or untracked one
// on a path the sandbox changed. It returns the paths base..tip changes.
func checkClean(ctx context.Context, g *gitcli.Client, base, tip string) (paths []string, err error) {
	if out, err := g.Output(ctx, "diff", "--cached", "--name-only"); err != nil {
		return nil, err
	} else if out != "" {
		return nil, &DirtyError{Staged: true}
	}
	// -z: paths exactly as they are (no quoting of spaces or non-ASCII).
	touchedOut, err := g.Output(ctx, "diff", "-z", "--name-only", "--no-renames", base, tip)
	if err != nil {
		return nil, err
	}
	all := gitcli.SplitNUL(touchedOut)
	touched := map[string]bool{}
	for _, p := range all {
		touched[p] = true
	}
	dirtyOut, err := g.Output(ctx, "status", "--porcelain", "-z", "--no-renames", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	var dirty []string
	for _, rec := range strings.Split(dirtyOut, "\x00") {
		if len(rec) > 3 && touched[rec[3:]] {
			dirty = append(dirty, rec[3:])
		}
	}
	if len(dirty) > 0 {
		return nil, &DirtyError{Paths: dirty}
	}
	return all, nil
}
