package replay

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// repo is a repository whose main has base (a.txt of five lines) and a
// branch "box" from it; git commits in dir and returns HEAD.
type repo struct {
	t    *testing.T
	dir  string
	g    *gitcli.Client
	base string
}

func newRepo(t *testing.T) *repo {
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), testenv.Files{"a.txt": "1\n2\n3\n4\n5\n"})
	r := &repo{t: t, dir: dir, g: gitcli.New(dir, testenv.Exec())}
	r.base = testenv.Git(t, dir, "rev-parse", "HEAD")
	return r
}

// commit writes files on branch (checked out) and commits them with msg.
func (r *repo) commit(branch, msg string, files map[string]string) string {
	r.t.Helper()
	testenv.Git(r.t, r.dir, "checkout", "-q", "-B", branch, r.at(branch))
	for p, body := range files {
		if err := os.WriteFile(filepath.Join(r.dir, p), []byte(body), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	testenv.Git(r.t, r.dir, "add", "-A")
	testenv.Git(r.t, r.dir, "commit", "-q", "-m", msg)
	return testenv.Git(r.t, r.dir, "rev-parse", "HEAD")
}

func (r *repo) at(branch string) string {
	id, err := r.g.RevParse(context.Background(), "refs/heads/"+branch)
	if err != nil {
		r.t.Fatal(err)
	}
	if id == "" {
		return r.base
	}
	return id
}

func (r *repo) replay(tip, onto string) *Result {
	r.t.Helper()
	who := gitcli.Ident{Name: "box (litterbox)", Email: "litterbox@localhost"}
	res, err := Replay(context.Background(), r.g, Spec{Base: r.base, Tip: tip, Onto: onto, Author: who, Committer: who, OntoName: "main", TipName: "litterbox/box"})
	if err != nil {
		r.t.Fatal(err)
	}
	return res
}

func (r *repo) show(rev string) string {
	return testenv.Git(r.t, r.dir, "show", "-s", "--format=%an|%ae|%ad|%s", rev)
}

// Each commit is written again on the moved base with its author, date
// and message; the base's change and the sandbox's are both in the tree.
func TestReplayClean(t *testing.T) {
	r := newRepo(t)
	c1 := r.commit("box", "add x", map[string]string{"x.txt": "x\n"})
	c2 := r.commit("box", "first line", map[string]string{"a.txt": "ONE\n2\n3\n4\n5\n"})
	n := r.commit("main", "last line", map[string]string{"a.txt": "1\n2\n3\n4\nFIVE\n", "y.txt": "y\n"})
	res := r.replay(c2, n)
	if res.Replayed != 2 || res.Dropped != 0 || len(res.Conflicts) != 0 {
		t.Fatalf("result %+v", res)
	}
	if got := testenv.Git(t, r.dir, "rev-list", "--parents", n+".."+res.Tip); len(strings.Split(got, "\n")) != 2 {
		t.Errorf("the new tip is not two commits on main: %s", got)
	}
	if got := testenv.Git(t, r.dir, "show", res.Tip+":a.txt"); got != "ONE\n2\n3\n4\nFIVE" {
		t.Errorf("a.txt %q", got)
	}
	if got := testenv.Git(t, r.dir, "ls-tree", "--name-only", res.Tip); got != "a.txt\nx.txt\ny.txt" {
		t.Errorf("tree %q", got)
	}
	if r.show(res.Tip) != r.show(c2) || r.show(res.Tip+"^") != r.show(c1) {
		t.Errorf("authors, dates or messages changed: %q %q", r.show(res.Tip), r.show(res.Tip+"^"))
	}
	if again := r.replay(c2, r.base); again.Tip != c2 {
		t.Errorf("replayed onto its own base, the tip is %s, not %s", again.Tip, c2)
	}
}

// A commit whose change the base holds already (an apply took it) is
// dropped.
func TestReplayDropsWhatTheBaseHolds(t *testing.T) {
	r := newRepo(t)
	c1 := r.commit("box", "add x", map[string]string{"x.txt": "x\n"})
	c2 := r.commit("box", "add z", map[string]string{"z.txt": "z\n"})
	n := r.commit("main", "applied x", map[string]string{"x.txt": "x\n"})
	res := r.replay(c2, n)
	if res.Replayed != 1 || res.Dropped != 1 {
		t.Fatalf("result %+v (c1 %s)", res, c1)
	}
	if got := testenv.Git(t, r.dir, "show", "-s", "--format=%s", res.Tip); got != "add z" {
		t.Errorf("tip %q", got)
	}
}

// The first commit that conflicts ends the replay: it and those after it
// are one commit holding the markers, which names the files; what came
// before is replayed as it was.
func TestReplayConflict(t *testing.T) {
	r := newRepo(t)
	r.commit("box", "add x", map[string]string{"x.txt": "x\n"})
	r.commit("box", "first line", map[string]string{"a.txt": "BOX\n2\n3\n4\n5\n"})
	c3 := r.commit("box", "add w", map[string]string{"w\x1b[31m.txt": "w\n"})
	testenv.Git(t, r.dir, "config", "merge.conflictStyle", "diff3")
	n := r.commit("main", "first line too", map[string]string{"a.txt": "MAIN\n2\n3\n4\n5\n"})
	res := r.replay(c3, n)
	if res.Replayed != 2 || len(res.Conflicts) != 1 || res.Conflicts[0] != "a.txt" {
		t.Fatalf("result %+v", res)
	}
	a := testenv.Git(t, r.dir, "show", res.Tip+":a.txt")
	if want := "<<<<<<< main\nMAIN\n||||||| base\n1\n=======\nBOX\n>>>>>>> litterbox/box\n2"; !strings.HasPrefix(a, want) {
		t.Errorf("a.txt holds %q, want it to start %q", a, want)
	}
	if got := testenv.Git(t, r.dir, "show", res.Tip+":w\x1b[31m.txt"); got != "w" {
		t.Errorf("the commit after the conflict is not in it: %q", got)
	}
	msg := testenv.Git(t, r.dir, "show", "-s", "--format=%B", res.Tip)
	if !strings.HasPrefix(msg, "sync onto main: conflicts in 1 file") || !strings.Contains(msg, "\n  a.txt") {
		t.Errorf("message %q", msg)
	}
	if got := testenv.Git(t, r.dir, "show", "-s", "--format=%s", res.Tip+"^"); got != "add x" {
		t.Errorf("the commit before the conflict: %q", got)
	}
}

// A branch holding a merge is merged onto the base as one change.
func TestReplayMergeOnTheBranch(t *testing.T) {
	r := newRepo(t)
	r.commit("box", "add x", map[string]string{"x.txt": "x\n"})
	r.commit("side", "add s", map[string]string{"s.txt": "s\n"})
	testenv.Git(t, r.dir, "checkout", "-q", "box")
	testenv.Git(t, r.dir, "merge", "-q", "--no-edit", "side")
	tip := testenv.Git(t, r.dir, "rev-parse", "HEAD")
	n := r.commit("main", "y", map[string]string{"y.txt": "y\n"})
	res := r.replay(tip, n)
	if res.Replayed != 1 || len(res.Conflicts) != 0 {
		t.Fatalf("result %+v", res)
	}
	if got := testenv.Git(t, r.dir, "ls-tree", "--name-only", res.Tip); got != "a.txt\ns.txt\nx.txt\ny.txt" {
		t.Errorf("tree %q", got)
	}
	if got := testenv.Git(t, r.dir, "rev-parse", res.Tip+"^"); got != n {
		t.Errorf("parent %s, want %s", got, n)
	}
}

// Only marker lines that name the revisions given are renamed: a path
// after a colon and a CRLF stay, a longer label that starts the same and
// a line of content do not change, and the base may be abbreviated.
func TestRelabelText(t *testing.T) {
	labels := [3][2]string{{"aaaa1111", "main"}, {"bbbb2222", "base"}, {"cccc3333", "litterbox/x"}}
	in := "<<<<<<< aaaa1111:old/name\r\nx\n||||||| bbbb2\n=======\n>>>>>>> cccc3333\n<<<<<<< aaaa11112\nsee >>>>>>> cccc3333\n>>>>>>> cccc3333"
	want := "<<<<<<< main:old/name\r\nx\n||||||| base\n=======\n>>>>>>> litterbox/x\n<<<<<<< aaaa11112\nsee >>>>>>> cccc3333\n>>>>>>> litterbox/x"
	got, changed := relabelText([]byte(in), labels)
	if string(got) != want || !changed {
		t.Errorf("got %q (%v), want %q", got, changed, want)
	}
	if _, changed := relabelText([]byte("no markers\n"), labels); changed {
		t.Error("a file with no markers changed")
	}
}
