package gitcli

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/runner"
)

// manyChanges is the number of changes from which CommitChanges builds
// the trees itself instead of through fast-import. fast-import finds each
// path's entry by a linear search of its directory, so n new names in one
// directory cost n²/2 comparisons: a call that made 100,000 names of 240
// bytes in one directory took 60 s to commit, and 1.6 s this way.
const manyChanges = 2000

// dirNode is a directory of the tree being built: its entries by name,
// read from the parent's tree (id) when it has one.
type dirNode struct {
	id      string
	entries map[string]*treeEntry
	changed bool
}

// treeEntry is one name in a directory; sub is the directory it names,
// once the build has gone into it.
type treeEntry struct {
	mode, id string
	sub      *dirNode
}

const treeMode = "040000"

// commitBuilt makes the commit CommitChanges makes, its tree built by
// TreeWith.
func (c *Client) commitBuilt(ctx context.Context, spec ChangeSpec) (commit, tree string, err error) {
	root, err := c.RevParse(ctx, spec.Parent+"^{tree}")
	if err != nil {
		return "", "", err
	}
	if root == "" {
		return "", "", fmt.Errorf("%s has no tree", spec.Parent)
	}
	if tree, err = c.TreeWith(ctx, root, spec.Changes); err != nil {
		return "", "", err
	}
	commit, err = c.writeCommit(ctx, tree, spec)
	return commit, tree, err
}

// TreeWith is the tree root with changes applied (ChangeSpec.Changes),
// reading root's trees along the changed paths with one cat-file per
// depth and writing the changed ones with one mktree.
func (c *Client) TreeWith(ctx context.Context, root string, changes []Entry) (string, error) {
	top := &dirNode{id: root}
	if err := c.readDirs(ctx, top, dirsOf(changes)); err != nil {
		return "", err
	}
	for _, e := range changes {
		if e.ID == "" {
			top.remove(strings.Split(e.Path, "/"))
		}
	}
	for _, e := range changes {
		if e.ID != "" {
			if err := top.set(strings.Split(e.Path, "/"), e.Mode, e.ID); err != nil {
				return "", fmt.Errorf("committing %q: %w", e.Path, err)
			}
		}
	}
	if !top.changed {
		return root, nil
	}
	return c.writeTrees(ctx, top, len(root)/2)
}

// writeCommit writes the commit object fast-import would write: the same
// idents (fastIdent) and both dates now, in the local zone.
func (c *Client) writeCommit(ctx context.Context, tree string, spec ChangeSpec) (string, error) {
	body := CommitText(tree, []string{spec.Parent}, spec.Author, spec.Committer, spec.Message)
	// --literally: the object is written as made, as fast-import does,
	// without the checks of a commit typed by a person.
	res, err := c.run(ctx, runner.Cmd{Args: []string{"hash-object", "--literally", "-t", "commit", "-w", "--stdin"}, Stdin: bytes.NewReader(body)})
	return strings.TrimSpace(string(res.Stdout)), err
}

// dirTrie holds the directories the changes reach, by name.
type dirTrie map[string]dirTrie

// dirsOf is the trie of every directory above a changed path.
func dirsOf(changes []Entry) dirTrie {
	top := dirTrie{}
	for _, e := range changes {
		parts := strings.Split(e.Path, "/")
		t := top
		for _, p := range parts[:len(parts)-1] {
			if t[p] == nil {
				t[p] = dirTrie{}
			}
			t = t[p]
		}
	}
	return top
}

// readDirs reads, a depth at a time, the directories of the parent's tree
// that want names, starting from top.
func (c *Client) readDirs(ctx context.Context, top *dirNode, want dirTrie) error {
	type pending struct {
		node *dirNode
		want dirTrie
	}
	level := []pending{{top, want}}
	for len(level) > 0 {
		seen := map[string]bool{}
		var ids []string
		for _, p := range level {
			if !seen[p.node.id] {
				ids = append(ids, p.node.id)
			}
			seen[p.node.id] = true
		}
		read := map[string]map[string]*treeEntry{}
		err := c.ReadBlobs(ctx, ids, true, func(id, typ string, _ int64, content io.Reader) error {
			if typ != "tree" {
				return fmt.Errorf("git object %s is a %s, not a tree", id, typ)
			}
			body, err := io.ReadAll(content)
			if err != nil {
				return err
			}
			read[id], err = parseTreeObject(body, len(id)/2)
			return err
		})
		if err != nil {
			return err
		}
		var next []pending
		for _, p := range level {
			// Two directories with the same content share an id, not a node.
			p.node.entries = cloneEntries(read[p.node.id])
			for name, sub := range p.want {
				if e := p.node.entries[name]; e != nil && e.mode == treeMode {
					e.sub = &dirNode{id: e.id}
					next = append(next, pending{e.sub, sub})
				}
			}
		}
		level = next
	}
	return nil
}

func cloneEntries(m map[string]*treeEntry) map[string]*treeEntry {
	out := make(map[string]*treeEntry, len(m))
	for k, e := range m {
		out[k] = &treeEntry{mode: e.mode, id: e.id}
	}
	return out
}

// parseTreeObject reads a tree object's entries: "<mode> <name>\0<raw id>".
func parseTreeObject(body []byte, idLen int) (map[string]*treeEntry, error) {
	out := map[string]*treeEntry{}
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+1+idLen {
			return nil, fmt.Errorf("a tree object ends inside an entry")
		}
		mode := string(body[:sp])
		if mode == "40000" {
			mode = treeMode
		}
		out[string(body[sp+1:nul])] = &treeEntry{mode: mode, id: hex.EncodeToString(body[nul+1 : nul+1+idLen])}
		body = body[nul+1+idLen:]
	}
	return out, nil
}

// remove takes the name at path out of the tree, a whole directory if it
// is one; a path that is not there changes nothing.
func (d *dirNode) remove(path []string) bool {
	e := d.entries[path[0]]
	if e == nil {
		return false
	}
	if len(path) == 1 {
		delete(d.entries, path[0])
		d.changed = true
		return true
	}
	if e.sub == nil || !e.sub.remove(path[1:]) {
		return false
	}
	d.changed = true
	return true
}

// set puts mode and id at path, making the directories above it; a file
// where one of them should be, or a directory where the file goes, is
// replaced, as update-index --replace does.
func (d *dirNode) set(path []string, mode, id string) error {
	d.changed = true
	name := path[0]
	if len(path) == 1 {
		d.entries[name] = &treeEntry{mode: mode, id: id}
		return nil
	}
	e := d.entries[name]
	switch {
	case e == nil || e.mode != treeMode:
		e = &treeEntry{mode: treeMode, sub: &dirNode{entries: map[string]*treeEntry{}}}
		d.entries[name] = e
	case e.sub == nil:
		// Only a change that set a whole directory (mode 040000) leaves
		// one unread: replacing it would drop what it holds.
		return fmt.Errorf("%s is a directory the commit has not read", name)
	}
	return e.sub.set(path[1:], mode, id)
}

// writeTrees computes the ids of the changed directories, children first,
// writes them with one git mktree, and returns the root's id. A directory
// left empty is dropped, as git stores none.
func (c *Client) writeTrees(ctx context.Context, top *dirNode, idLen int) (string, error) {
	var in bytes.Buffer
	var want []string
	var write func(d *dirNode) string
	write = func(d *dirNode) string {
		if !d.changed {
			return d.id
		}
		names := make([]string, 0, len(d.entries))
		for name, e := range d.entries {
			if e.sub != nil {
				if e.id = write(e.sub); e.id == "" {
					delete(d.entries, name)
					continue
				}
			}
			names = append(names, name)
		}
		if len(names) == 0 && d != top {
			return ""
		}
		slices.SortFunc(names, func(a, b string) int { return compareNames(a, d.entries[a].mode, b, d.entries[b].mode) })
		var obj bytes.Buffer
		for _, name := range names {
			e := d.entries[name]
			fmt.Fprintf(&obj, "%s %s\x00", strings.TrimPrefix(e.mode, "0"), name)
			raw, _ := hex.DecodeString(e.id)
			obj.Write(raw)
			fmt.Fprintf(&in, "%s %s %s\t%s\x00", e.mode, objectType(e.mode), e.id, name)
		}
		in.WriteByte(0)
		id := hashObject("tree", obj.Bytes(), idLen)
		want = append(want, id)
		return id
	}
	root := write(top)
	res, err := c.run(ctx, runner.Cmd{Args: []string{"mktree", "-z", "--missing", "--batch"}, Stdin: &in})
	if err != nil {
		return "", err
	}
	if got := strings.Fields(string(res.Stdout)); !slices.Equal(got, want) {
		return "", fmt.Errorf("git mktree wrote %d trees that are not the %d computed", len(got), len(want))
	}
	return root, nil
}

// compareNames orders a tree's entries as git does: a directory's name as
// if it ended in a slash.
func compareNames(a, modeA, b, modeB string) int {
	if modeA == treeMode {
		a += "/"
	}
	if modeB == treeMode {
		b += "/"
	}
	return strings.Compare(a, b)
}

func objectType(mode string) string {
	switch mode {
	case treeMode:
		return "tree"
	case "160000":
		return "commit"
	}
	return "blob"
}

// hashObject is git's id of an object: SHA-1, or SHA-256 in a repository
// whose ids are 32 bytes.
func hashObject(typ string, body []byte, idLen int) string {
	h := sha1.New()
	if idLen == sha256.Size {
		h = sha256.New()
	}
	fmt.Fprintf(h, "%s %d\x00", typ, len(body))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
