package gitcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/runner"
)

// ChangeSpec is a commit made from its parent's tree and changes to paths,
// with no index: CommitChanges.
type ChangeSpec struct {
	Parent string
	// Changes are applied in order, removals first: an Entry with no ID
	// removes its path, any other sets it (a path where a file or
	// directory stood replaces it, as update-index --replace does).
	Changes           []Entry
	Message           string
	Author, Committer Ident
}

// unwrittenRef is the branch fast-import builds a commit on. It is reset
// before the stream ends, so fast-import never writes it: the commit is
// returned, and the caller moves its own ref with UpdateRef, which checks
// where the ref was.
const unwrittenRef = "refs/litterbox-unwritten/commit"

// CommitChanges makes the commit spec describes with one git fast-import,
// which reads only the parent's trees along the changed paths, and returns
// it with its tree. It moves no ref. Both dates are the time of the call.
//
// Measured on the Go source (11,478 files): 14 ms for a one-file commit,
// where a private index's update-index, write-tree and commit-tree took 39.
// From manyChanges changes on, the trees are built here instead
// (commitBuilt), the same trees and the same commit.
func (c *Client) CommitChanges(ctx context.Context, spec ChangeSpec) (commit, tree string, err error) {
	if spec.Parent == "" {
		return "", "", errors.New("a commit of changes needs a parent")
	}
	if len(spec.Changes) >= manyChanges {
		return c.commitBuilt(ctx, spec)
	}
	return c.commitImported(ctx, spec)
}

// commitImported makes the commit with one git fast-import.
func (c *Client) commitImported(ctx context.Context, spec ChangeSpec) (commit, tree string, err error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "commit %s\nmark :1\n", unwrittenRef)
	fmt.Fprintf(&b, "author %s now\ncommitter %s now\n", fastIdent(spec.Author), fastIdent(spec.Committer))
	fmt.Fprintf(&b, "data %d\n%s\nfrom %s\n", len(spec.Message), spec.Message, spec.Parent)
	for _, e := range spec.Changes {
		if e.ID == "" {
			fmt.Fprintf(&b, "D %s\n", fastPath(e.Path))
		}
	}
	for _, e := range spec.Changes {
		if e.ID != "" {
			fmt.Fprintf(&b, "M %s %s %s\n", e.Mode, e.ID, fastPath(e.Path))
		}
	}
	// The answers come on stdout, in order: the commit's id, then its
	// root tree's entry ("040000 tree <id>\t").
	fmt.Fprintf(&b, "\nget-mark :1\nls :1 \"\"\nreset %s\n\ndone\n", unwrittenRef)
	res, err := c.run(ctx, runner.Cmd{
		// Names are compared as they are: with core.ignorecase (macOS and
		// Windows clones) fast-import would take "a" for "A" and remove or
		// overwrite the wrong one.
		Args:  []string{"-c", "core.ignorecase=false", "fast-import", "--quiet", "--done", "--date-format=now"},
		Stdin: bytes.NewReader(b.Bytes()),
	})
	if err != nil {
		return "", "", err
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) == 2 {
		if f := strings.Fields(lines[1]); len(f) == 3 && f[1] == "tree" {
			return strings.TrimSpace(lines[0]), f[2], nil
		}
	}
	return "", "", fmt.Errorf("git fast-import answered %q for a commit and its tree", res.Stdout)
}

// fastIdent is "Name <email>" with what fast-import cannot take out of
// both: the angle brackets and line ends that delimit an ident (git's own
// commit drops them the same way).
func fastIdent(id Ident) string {
	strip := strings.NewReplacer("<", "", ">", "", "\n", "", "\r", "")
	name := strings.TrimSpace(strip.Replace(id.Name))
	return fmt.Sprintf("%s <%s>", name, strings.TrimSpace(strip.Replace(id.Email)))
}

// fastPath quotes p as fast-import reads a quoted path: C-style, with the
// quote, the backslash and control characters escaped and other bytes as
// they are.
func fastPath(p string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\%03o`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
