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
	"strings"

	"github.com/litterbox-dev/litterbox/runner"
)

// Client runs git in one directory.
type Client struct {
	Bin    string
	Dir    string
	Runner runner.Runner
}

// New returns a client for the repository at (or above) dir.
func New(dir string, r runner.Runner) *Client { return &Client{Bin: "git", Dir: dir, Runner: r} }

func (c *Client) run(ctx context.Context, cmd runner.Cmd) (runner.Result, error) {
	cmd.Name = c.Bin
	cmd.Args = append([]string{"-C", c.Dir}, cmd.Args...)
	return c.Runner.Run(ctx, cmd)
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

// ErrNotARepo is returned by Repo outside a git work tree.
var ErrNotARepo = errors.New("not a git repository")

// RepoArgs asks for the work tree root and the absolute common git dir (shared
// by all worktrees) in one call.
func RepoArgs() []string {
	return []string{"rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"}
}

// Repo returns the work tree root and the common git dir.
func (c *Client) Repo(ctx context.Context) (root, commonDir string, err error) {
	out, err := c.out(ctx, RepoArgs()...)
	if err != nil {
		if ee, ok := runner.AsExit(err); ok && strings.Contains(string(ee.Result.Stderr), "not a git repository") {
			return "", "", fmt.Errorf("%s: %w", c.Dir, ErrNotARepo)
		}
		return "", "", err
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 2 {
		return "", "", fmt.Errorf("%s: no work tree (a bare repository?): %w", c.Dir, ErrNotARepo)
	}
	return lines[0], lines[1], nil
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
	res, err := c.run(ctx, runner.Cmd{Args: StatusArgs()})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rec := range bytes.Split(res.Stdout, []byte{0}) {
		// A rename record is followed by its source path in a record of its own,
		// which has no two-letter status.
		if len(rec) > 3 && rec[2] == ' ' {
			n++
		}
	}
	return n, nil
}
