// Package gitcli is a typed client for the git command line. Argument vectors
// are built by pure functions; methods run them in one repository through a
// runner.Runner. It never changes the user's index, HEAD or work tree.
package gitcli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/runner"
)

// Client runs git in one directory.
type Client struct {
	Bin string
	Dir string
	// Global are options for git itself, before the command: --git-dir and
	// --work-tree for a work tree git cannot find from its root alone
	// (core.worktree, GIT_DIR).
	Global []string
	Runner runner.Runner
}

// New returns a client for the repository at (or above) dir.
func New(dir string, r runner.Runner) *Client { return &Client{Bin: "git", Dir: dir, Runner: r} }

func (c *Client) run(ctx context.Context, cmd runner.Cmd) (runner.Result, error) {
	return c.Runner.Run(ctx, c.inRepo(cmd))
}

// inRepo makes cmd a git command in the client's repository.
func (c *Client) inRepo(cmd runner.Cmd) runner.Cmd {
	cmd.Name = c.Bin
	cmd.Args = append(append([]string{"-C", c.Dir}, c.Global...), cmd.Args...)
	return cmd
}

func (c *Client) out(ctx context.Context, args ...string) (string, error) {
	res, err := c.run(ctx, runner.Cmd{Args: args})
	return strings.TrimRight(string(res.Stdout), "\n"), err
}

// Output runs a git command in the repository and returns its stdout, with
// the final newline trimmed (leading spaces matter in porcelain output).
func (c *Client) Output(ctx context.Context, args ...string) (string, error) {
	return c.out(ctx, args...)
}

// Stream runs a git command in the repository with the caller's streams, so
// git's own terminal detection (colour, pager) applies.
func (c *Client) Stream(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer, args ...string) error {
	_, err := c.run(ctx, runner.Cmd{Args: args, Stdin: stdin, Stdout: stdout, Stderr: stderr})
	return err
}

// Repository shapes Repo refuses.
var (
	// ErrNotARepo is returned by Repo outside any git repository.
	ErrNotARepo = errors.New("not a git repository")
	// ErrBare is returned by Repo in a bare repository: it has no work tree.
	ErrBare = errors.New("a bare repository")
	// ErrInGitDir is returned by Repo inside a repository's git directory.
	ErrInGitDir = errors.New("inside a git directory, not a work tree")
)

// RepoArgs asks, in one call, for the git dir of this work tree, the common
// git dir (shared by all worktrees), whether the repository is bare, and the
// work tree root. The root comes last: git fails on it where there is none,
// after printing the others.
func RepoArgs() []string {
	return []string{"rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--is-bare-repository", "--show-toplevel"}
}

// RepoPaths locate a work tree and its repository.
type RepoPaths struct {
	Root      string // the work tree's root
	GitDir    string // this work tree's git dir (.git/worktrees/X for a linked one)
	CommonDir string // the repository's git dir, the same from every worktree
}

// Repo finds the work tree at or above the client's directory.
func (c *Client) Repo(ctx context.Context) (RepoPaths, error) {
	out, err := c.out(ctx, RepoArgs()...)
	lines := strings.Split(out, "\n")
	if err != nil {
		ee, ok := runner.AsExit(err)
		switch {
		case !ok:
			return RepoPaths{}, err
		case strings.Contains(string(ee.Result.Stderr), "not a git repository"):
			return RepoPaths{}, fmt.Errorf("%s: %w", c.Dir, ErrNotARepo)
		case len(lines) >= 3 && lines[2] == "true":
			return RepoPaths{}, fmt.Errorf("%s is %w", lines[1], ErrBare)
		case len(lines) >= 3:
			return RepoPaths{}, fmt.Errorf("%s: %w", c.Dir, ErrInGitDir)
		}
		return RepoPaths{}, err
	}
	if len(lines) != 4 {
		return RepoPaths{}, fmt.Errorf("git rev-parse in %s printed %d lines, not 4", c.Dir, len(lines))
	}
	return RepoPaths{GitDir: lines[0], CommonDir: lines[1], Root: lines[3]}, nil
}

// WorktreeRoots lists the roots of every work tree of the repository
// (main first), as `git worktree list` knows them.
func (c *Client) WorktreeRoots(ctx context.Context) ([]string, error) {
	out, err := c.out(ctx, "worktree", "list", "--porcelain", "-z")
	if err != nil {
		return nil, err
	}
	var roots []string
	for _, f := range strings.Split(out, "\x00") {
		if p, ok := strings.CutPrefix(f, "worktree "); ok {
			roots = append(roots, p)
		}
	}
	return roots, nil
}

// ErrUnknownRevision is returned by ResolveCommit for a name that is not a commit.
var ErrUnknownRevision = errors.New("unknown revision")

// ResolveCommitArgs peels rev to a commit id; --end-of-options keeps a rev that
// starts with "-" from being read as an option.
func ResolveCommitArgs(rev string) []string {
	return []string{"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"}
}

// ResolveCommit returns the full commit id rev names.
func (c *Client) ResolveCommit(ctx context.Context, rev string) (string, error) {
	out, err := c.out(ctx, ResolveCommitArgs(rev)...)
	if err != nil {
		if ee, ok := runner.AsExit(err); ok && ee.Result.ExitCode == 1 {
			return "", fmt.Errorf("%q: %w", rev, ErrUnknownRevision)
		}
		return "", err
	}
	return out, nil
}

// CreateRefArgs creates ref at id only if ref does not exist yet (the empty old
// value), so two processes racing for one name cannot both win.
func CreateRefArgs(ref, id, reason string) []string {
	return []string{"update-ref", "-m", reason, ref, id, ""}
}

// ErrRefExists is returned by CreateRef when the ref is already there.
var ErrRefExists = errors.New("ref already exists")

// CreateRef creates ref pointing at id, failing with ErrRefExists if it exists.
func (c *Client) CreateRef(ctx context.Context, ref, id, reason string) error {
	_, err := c.run(ctx, runner.Cmd{Args: CreateRefArgs(ref, id, reason)})
	if ee, ok := runner.AsExit(err); ok && strings.Contains(string(ee.Result.Stderr), "reference already exists") {
		return fmt.Errorf("%s: %w", ref, ErrRefExists)
	}
	return err
}

// DeleteRefArgs deletes ref, only if it still points at old when old is set.
func DeleteRefArgs(ref, old string) []string {
	a := []string{"update-ref", "-d", ref}
	if old != "" {
		a = append(a, old)
	}
	return a
}

// DeleteRef deletes ref (guarded by old when it is not empty).
func (c *Client) DeleteRef(ctx context.Context, ref, old string) error {
	_, err := c.run(ctx, runner.Cmd{Args: DeleteRefArgs(ref, old)})
	return err
}

// Ref is a ref name and the object it points at.
type Ref struct {
	Name string
	ID   string
}

// ListRefsArgs lists refs under the given prefixes.
func ListRefsArgs(prefixes ...string) []string {
	return append([]string{"for-each-ref", "--format=%(objectname) %(refname)"}, prefixes...)
}

// ListRefs returns the refs under prefixes (e.g. "refs/heads/litterbox/").
func (c *Client) ListRefs(ctx context.Context, prefixes ...string) ([]Ref, error) {
	out, err := c.out(ctx, ListRefsArgs(prefixes...)...)
	if err != nil {
		return nil, err
	}
	var refs []Ref
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		id, name, ok := strings.Cut(sc.Text(), " ")
		if ok {
			refs = append(refs, Ref{Name: name, ID: id})
		}
	}
	return refs, nil
}

// RefDates is when the last commit of each ref under prefix was made
// (its committer date), by ref name.
func (c *Client) RefDates(ctx context.Context, prefix string) (map[string]time.Time, error) {
	out, err := c.out(ctx, "for-each-ref", "--format=%(committerdate:unix) %(refname)", prefix)
	if err != nil {
		return nil, err
	}
	dates := map[string]time.Time{}
	for _, line := range strings.Split(out, "\n") {
		at, name, ok := strings.Cut(line, " ")
		if sec, err := strconv.ParseInt(at, 10, 64); ok && err == nil {
			dates[name] = time.Unix(sec, 0)
		}
	}
	return dates, nil
}

// ArchiveArgs writes the tree of commit as a tar stream.
func ArchiveArgs(commit string) []string {
	return []string{"-c", "tar.umask=0022", "archive", "--format=tar", commit}
}

// Archive streams the tree of commit as tar into w.
func (c *Client) Archive(ctx context.Context, commit string, w io.Writer) error {
	_, err := c.run(ctx, runner.Cmd{Args: ArchiveArgs(commit), Stdout: w})
	return err
}

// StatusArgs lists uncommitted changes, untracked files included.
func StatusArgs() []string {
	return []string{"status", "--porcelain=v1", "-z", "--untracked-files=normal"}
}

// Dirty returns how many paths have uncommitted changes (untracked included).
func (c *Client) Dirty(ctx context.Context) (int, error) {
	paths, err := c.DirtyPaths(ctx)
	return len(paths), err
}

// DirtyPaths returns the paths with uncommitted changes (untracked
// included; an untracked directory as "dir/"), relative to the work tree.
func (c *Client) DirtyPaths(ctx context.Context) ([]string, error) {
	res, err := c.run(ctx, runner.Cmd{Args: StatusArgs()})
	if err != nil {
		return nil, err
	}
	var paths []string
	for _, rec := range bytes.Split(res.Stdout, []byte{0}) {
		// A rename record is followed by its source path in a record of its own,
		// which has no two-letter status.
		if len(rec) > 3 && rec[2] == ' ' {
			paths = append(paths, string(rec[3:]))
		}
	}
	return paths, nil
}

// SplitNUL splits git's -z output into its non-empty fields.
func SplitNUL(s string) []string {
	var out []string
	for _, p := range strings.Split(s, "\x00") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
