package gitcli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/runner"
)

// MergeTree merges commits ours and theirs as `git merge-tree
// --write-tree` does, from their merge base, writing only objects: the
// merged tree, with conflict markers in the files that conflict, and
// those files' paths (none when it merged cleanly).
func (c *Client) MergeTree(ctx context.Context, ours, theirs string) (tree string, conflicts []string, err error) {
	out, err := c.out(ctx, "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", ours, theirs)
	if ee, ok := runner.AsExit(err); ok && ee.Result.ExitCode == 1 {
		err = nil // conflicts: the tree comes first all the same
	}
	if err != nil {
		return "", nil, err
	}
	f := SplitNUL(out)
	if len(f) == 0 {
		return "", nil, fmt.Errorf("git merge-tree of %s and %s gave no tree", ours, theirs)
	}
	seen := map[string]bool{}
	for _, p := range f[1:] {
		if !seen[p] {
			seen[p] = true
			conflicts = append(conflicts, p)
		}
	}
	return f[0], conflicts, nil
}

// WriteCommit stores body, a commit object's text, and returns its id;
// git checks it as it does a commit it makes.
func (c *Client) WriteCommit(ctx context.Context, body []byte) (string, error) {
	res, err := c.run(ctx, runner.Cmd{Args: []string{"hash-object", "-t", "commit", "-w", "--stdin"}, Stdin: bytes.NewReader(body)})
	return strings.TrimSpace(string(res.Stdout)), err
}

// WriteBlob stores body as a blob, byte for byte, and returns its id.
func (c *Client) WriteBlob(ctx context.Context, body []byte) (string, error) {
	res, err := c.run(ctx, runner.Cmd{Args: []string{"hash-object", "-w", "--no-filters", "--stdin"}, Stdin: bytes.NewReader(body)})
	return strings.TrimSpace(string(res.Stdout)), err
}

// CommitText is the text of a commit of tree on parents, by author and
// committer now, with message.
func CommitText(tree string, parents []string, author, committer Ident, message string) []byte {
	now := time.Now()
	date := fmt.Sprintf("%d %s", now.Unix(), now.Format("-0700"))
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\n", tree)
	for _, p := range parents {
		fmt.Fprintf(&b, "parent %s\n", p)
	}
	fmt.Fprintf(&b, "author %s %s\ncommitter %s %s\n\n", fastIdent(author), date, fastIdent(committer), date)
	b.WriteString(message)
	return b.Bytes()
}
