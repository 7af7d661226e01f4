// Package replay moves a sandbox's commits onto another base as git
// objects alone: each commit's change is merged onto the new base with
// git merge-tree (a cherry-pick that touches no work tree, index or HEAD),
// and its commit is written again with its own author, dates and message
// on the new parent. git 2.39 has neither `git replay` nor merge-tree's
// --merge-base, so each pick merges the commit with a scratch commit of
// the current tree on the commit's own parent, which makes that parent
// the merge base.
//
// The first commit that conflicts ends the replay: it and every commit
// after it are merged onto the new base as one change, and that merge,
// conflict markers and all, is committed as one commit that names the
// files. Nothing is lost: the old commits stay where they were (the
// caller keeps a ref to the old tip), and the merged tree holds every
// change the sandbox made.
package replay

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
)

// Spec is one replay: the commits Base..Tip onto Onto.
type Spec struct {
	Base, Tip, Onto string
	// Author and Committer make the commit that holds a conflict.
	Author, Committer gitcli.Ident
	// OntoName names Onto in that commit's message and its conflict
	// markers ("main"), TipName the sandbox's side ("litterbox/fix").
	OntoName, TipName string
}

// Result is what a replay made.
type Result struct {
	// Tip is the new tip: Onto with the commits on it.
	Tip string
	// Replayed counts the commits written again; Dropped those whose
	// change Onto holds already (an apply took them).
	Replayed, Dropped int
	// Conflicts are the files of the conflict commit, which is Tip.
	Conflicts []string
}

// commit is one commit of the range, as git stores it.
type commit struct {
	id, parent, tree string
	text             []byte
}

// Replay replays s.Base..s.Tip onto s.Onto and returns the new tip; it
// moves no ref.
func Replay(ctx context.Context, g *gitcli.Client, s Spec) (*Result, error) {
	list, linear, err := commits(ctx, g, s.Base, s.Tip)
	if err != nil {
		return nil, err
	}
	r := &Result{Tip: s.Onto}
	cur, err := treeOf(ctx, g, s.Onto)
	if err != nil {
		return nil, err
	}
	if !linear {
		// A merge on the branch: its commits are taken as one change.
		return r, conflictCommit(ctx, g, s, r, cur, s.Base, len(list))
	}
	// Each commit's parent is the one before it (the range is a line), so
	// its tree is known but for the first's, the base's.
	parentTree, err := treeOf(ctx, g, s.Base)
	if err != nil {
		return nil, err
	}
	for i, c := range list {
		if i > 0 {
			parentTree = list[i-1].tree
		}
		tree, conflicts, err := pick(ctx, g, c, parentTree, cur)
		if err != nil {
			return nil, err
		}
		if len(conflicts) > 0 {
			return r, conflictCommit(ctx, g, s, r, cur, c.parent, len(list)-i)
		}
		if tree == cur {
			r.Dropped++
			continue
		}
		id, err := g.WriteCommit(ctx, rewrite(c.text, tree, r.Tip))
		if err != nil {
			return nil, fmt.Errorf("writing %s again: %w", c.id, err)
		}
		r.Tip, cur = id, tree
		r.Replayed++
	}
	return r, nil
}

// pick merges c's change (from parentTree, its parent's) onto the tree
// cur: the tree c would have there, and the files that conflict.
func pick(ctx context.Context, g *gitcli.Client, c commit, parentTree, cur string) (string, []string, error) {
	if parentTree == cur {
		return c.tree, nil, nil // nothing to merge with
	}
	scratch, err := scratchOn(ctx, g, cur, c.parent)
	if err != nil {
		return "", nil, err
	}
	return g.MergeTree(ctx, scratch, c.id)
}

// scratchOn writes a commit of tree on parent, which no ref names: merged
// with a child of parent, its merge base is parent.
func scratchOn(ctx context.Context, g *gitcli.Client, tree, parent string) (string, error) {
	who := gitcli.Ident{Name: "litterbox", Email: "litterbox@localhost"}
	return g.WriteCommit(ctx, gitcli.CommitText(tree, []string{parent}, who, who, "litterbox sync: scratch\n"))
}

// conflictCommit merges the last n commits, from parent on, onto r.Tip as
// one change and commits the outcome, markers and all, naming the files
// that conflict.
func conflictCommit(ctx context.Context, g *gitcli.Client, s Spec, r *Result, cur, parent string, n int) error {
	scratch, err := scratchOn(ctx, g, cur, parent)
	if err != nil {
		return err
	}
	tree, conflicts, err := g.MergeTree(ctx, scratch, s.Tip)
	if err != nil {
		return err
	}
	if len(conflicts) > 0 {
		labels := [3][2]string{{scratch, s.ontoLabel()}, {parent, "base"}, {s.Tip, s.TipName}}
		if tree, err = relabel(ctx, g, tree, conflicts, labels); err != nil {
			return err
		}
	}
	if tree == cur {
		r.Dropped += n
		return nil
	}
	msg := conflictMessage(s, conflicts, n)
	id, err := g.WriteCommit(ctx, gitcli.CommitText(tree, []string{r.Tip}, s.Author, s.Committer, msg))
	if err != nil {
		return err
	}
	r.Tip, r.Conflicts = id, conflicts
	r.Replayed++
	return nil
}

// ontoLabel names Onto's side of a conflict: OntoName, or its short id.
func (s Spec) ontoLabel() string {
	if s.OntoName != "" {
		return s.OntoName
	}
	return s.Onto[:min(12, len(s.Onto))]
}

// tipLabel names the sandbox's side of a conflict: TipName, or its tip's
// short id.
func (s Spec) tipLabel() string {
	if s.TipName != "" {
		return s.TipName
	}
	return s.Tip[:min(12, len(s.Tip))]
}

// conflictMessage says what the conflict commit holds. The file names are
// the agent's: each is shown inert, on a line of its own.
func conflictMessage(s Spec, conflicts []string, n int) string {
	var b strings.Builder
	onto := s.ontoLabel()
	what := fmt.Sprintf("%d commits", n)
	if n == 1 {
		what = "1 commit"
	}
	if len(conflicts) == 0 {
		fmt.Fprintf(&b, "sync onto %s: %s as one change\n\n", agenttext.Shown(onto), what)
		fmt.Fprintf(&b, "The branch held a merge, so its changes were merged onto %s together.\n", agenttext.Shown(onto))
		return b.String()
	}
	fmt.Fprintf(&b, "sync onto %s: conflicts in %d %s\n\n", agenttext.Shown(onto), len(conflicts), plural(len(conflicts), "file"))
	if n == 1 {
		fmt.Fprintf(&b, "The sandbox's last commit, merged onto %s, conflicts with it.\n", agenttext.Shown(onto))
	} else {
		fmt.Fprintf(&b, "The sandbox's last %d commits, merged onto %s as one change, conflict\nwith it.\n", n, agenttext.Shown(onto))
	}
	fmt.Fprintf(&b, "Resolve the markers in these files (<<<<<<< %s: its side;\n>>>>>>> %s: the sandbox's):\n\n", agenttext.Shown(s.ontoLabel()), agenttext.Shown(s.tipLabel()))
	for _, p := range conflicts {
		fmt.Fprintf(&b, "  %s\n", agenttext.Shown(p))
	}
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// commits lists base..tip oldest first, with each commit's text, and says
// whether the range is a line (each commit has one parent, the first on
// base).
func commits(ctx context.Context, g *gitcli.Client, base, tip string) ([]commit, bool, error) {
	out, err := g.Output(ctx, "rev-list", "--reverse", "--topo-order", "--parents", base+".."+tip)
	if err != nil {
		return nil, false, err
	}
	var list []commit
	linear := true
	prev := base
	var ids []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 || f[1] != prev {
			linear = false
		}
		c := commit{id: f[0]}
		if len(f) > 1 {
			c.parent = f[1]
		}
		list, ids, prev = append(list, c), append(ids, c.id), c.id
	}
	i := 0
	err = g.ReadBlobs(ctx, ids, true, func(id, typ string, _ int64, r io.Reader) error {
		if typ != "commit" {
			return fmt.Errorf("%s is a %s, not a commit", id, typ)
		}
		text, err := io.ReadAll(r)
		list[i].text, list[i].tree = text, header(text, "tree")
		i++
		return err
	})
	return list, linear, err
}

// treeOf is the id of rev's tree.
func treeOf(ctx context.Context, g *gitcli.Client, rev string) (string, error) {
	return g.Output(ctx, "rev-parse", "--verify", "--end-of-options", rev+"^{tree}")
}

// header is the value of the first header line key of a commit's text.
func header(text []byte, key string) string {
	head, _, _ := bytes.Cut(text, []byte("\n\n"))
	for _, line := range strings.Split(string(head), "\n") {
		if v, ok := strings.CutPrefix(line, key+" "); ok {
			return v
		}
	}
	return ""
}

// rewrite is a commit's text with tree and parent replaced: author,
// committer, dates, encoding and message are kept byte for byte, and a
// signature, which would no longer hold, is dropped.
func rewrite(text []byte, tree, parent string) []byte {
	head, msg, _ := bytes.Cut(text, []byte("\n\n"))
	var b bytes.Buffer
	fmt.Fprintf(&b, "tree %s\nparent %s\n", tree, parent)
	skipping := false
	for _, line := range strings.Split(string(head), "\n") {
		if strings.HasPrefix(line, " ") && skipping {
			continue // a continuation of a dropped header
		}
		key, _, _ := strings.Cut(line, " ")
		skipping = key == "tree" || key == "parent" || key == "gpgsig" || key == "gpgsig-sha256" || key == "mergetag"
		if !skipping {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	b.WriteByte('\n')
	b.Write(msg)
	return b.Bytes()
}
