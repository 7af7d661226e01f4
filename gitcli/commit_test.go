package gitcli_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// commitWays are the two ways CommitChanges makes a commit: fast-import,
// and the trees built by gitcli itself for many changes.
var commitWays = map[string]func(*gitcli.Client, context.Context, gitcli.ChangeSpec) (string, string, error){
	"fast-import": gitcli.CommitImported,
	"built":       gitcli.CommitBuilt,
}

// CommitChanges makes the tree git's own index makes of the same changes
// (update-index --replace, then write-tree), both ways: names fast-import
// must take quoted, a file that becomes a directory and the reverse,
// modes, a gitlink, a change to nothing, the removal of every file. It
// moves no ref, not even the one fast-import builds on.
func TestCommitChangesMatchesTheIndex(t *testing.T) {
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), testenv.Files{
		"keep.txt": "keep\n", "f": "a file\n", "d/x": "x\n", "d/y": "y\n", "deep/er/z": "z\n",
		"Up": "upper\n", "up": "lower\n", "README": "r\n", ":colon": "c\n", ":!x": "x\n", "d.txt": "after d/ as git sorts\n", "d-x": "before\n",
	})
	// As on a macOS or Windows clone: names must still be compared as
	// they are, as the sandbox's file system does.
	testenv.Git(t, dir, "config", "core.ignorecase", "true")
	ctx := context.Background()
	g := gitcli.New(dir, testenv.Exec())
	head := testenv.Git(t, dir, "rev-parse", "HEAD")
	blob := func(s string) string {
		res, err := testenv.Exec().Run(ctx, runner.Cmd{Name: "git", Args: []string{"-C", dir, "hash-object", "-w", "--stdin"}, Stdin: strings.NewReader(s)})
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	set := func(path, body string) gitcli.Entry { return gitcli.Entry{Mode: "100644", ID: blob(body), Path: path} }
	del := func(path string) gitcli.Entry { return gitcli.Entry{Path: path} }
	names := []string{`q"uote`, `back\slash`, "new\nline", "tab\there", `"leading`, "ünïcode", "ctrl\x01\x7f", "sp ace", "d/\\n"}
	var named []gitcli.Entry
	for _, n := range names {
		named = append(named, set(n, n))
	}
	cases := map[string][]gitcli.Entry{
		"names":             named,
		"file to directory": {del("f"), set("f/g", "g\n")},
		"directory to file": {del("d/x"), del("d/y"), set("d", "now a file\n")},
		"modes":             {{Mode: "100755", ID: blob("#!/bin/sh\n"), Path: "run"}, {Mode: "120000", ID: blob("keep.txt"), Path: "link"}},
		"gitlink":           {{Mode: "160000", ID: head, Path: "deep/sub"}, del("deep/er/z")},
		"file above a file": {set("keep.txt/inner/f", "f\n"), set("d/x/y", "y\n")},
		"absent":            {del("no/such/path"), del("keep.txt/below")},
		"nothing":           {set("keep.txt", "keep\n")},
		"everything":        {del("keep.txt"), del("f"), del("d/x"), del("d/y"), del("deep/er/z")},
		"deep":              {set("deep/er/z", "z2\n"), set("deep/new/w", "w\n")},
		"case":              {del("up"), set("readme", "new\n")},
	}
	for name, changes := range cases {
		for way, commitWay := range commitWays {
			t.Run(way+"/"+name, func(t *testing.T) {
				checkCommit(t, dir, head, name, changes, func(spec gitcli.ChangeSpec) (string, string, error) { return commitWay(g, ctx, spec) })
			})
		}
	}
	// The tree's entries are read by name as it is: a name that starts
	// with ':' is no pathspec magic.
	got, err := g.TreeEntries(ctx, head, []string{":colon", ":!x", "d", "missing"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for p := range got {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	if want := []string{":!x", ":colon", "d/x", "d/y"}; !slices.Equal(paths, want) {
		t.Errorf("TreeEntries read %q, want %q", paths, want)
	}
	if refs := testenv.Git(t, dir, "for-each-ref", "--format=%(refname)"); refs != "refs/heads/main" && refs != "refs/heads/master" {
		t.Errorf("refs after the commits: %q", refs)
	}
}

// checkCommit commits changes on head with commit and checks the commit:
// the index's tree, head its parent, the idents and the message.
func checkCommit(t *testing.T, dir, head, name string, changes []gitcli.Entry, commit func(gitcli.ChangeSpec) (string, string, error)) {
	t.Helper()
	id, tree, err := commit(gitcli.ChangeSpec{
		Parent: head, Changes: changes, Message: "m: " + name + "\n",
		Author: gitcli.Ident{Name: "A <x>.", Email: "a@example.com"}, Committer: gitcli.Ident{Name: "C", Email: "c@example.com"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := indexTree(t, dir, head, changes); tree != want {
		t.Errorf("tree %s, the index's %s:\n%s", tree, want, testenv.Git(t, dir, "ls-tree", "-r", tree))
	}
	if got := testenv.Git(t, dir, "rev-parse", id+"^{tree}", id+"^"); got != tree+"\n"+head {
		t.Errorf("commit %s has tree and parent %q", id, got)
	}
	if got := testenv.Git(t, dir, "log", "-1", "--format=%an <%ae>|%cn <%ce>|%B", id); got != "A x. <a@example.com>|C <c@example.com>|m: "+name {
		t.Errorf("commit reads %q", got)
	}
	testenv.Git(t, dir, "fsck", "--no-dangling", "--strict")
}

// A call that made thousands of names in one directory, some in a new
// one, and removed part of another: CommitChanges takes the way it takes
// for many changes, and makes the index's tree.
func TestCommitChangesManyNamesInOneDirectory(t *testing.T) {
	files := testenv.Files{"big/keep": "k\n", "other/a": "a\n"}
	for i := 0; i < 300; i++ {
		files[fmt.Sprintf("gone/%03d", i)] = "g\n"
	}
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), files)
	ctx := context.Background()
	g := gitcli.New(dir, testenv.Exec())
	head := testenv.Git(t, dir, "rev-parse", "HEAD")
	empty := testenv.Git(t, dir, "hash-object", "-w", "/dev/null")
	var changes []gitcli.Entry
	long := strings.Repeat("0", 230)
	for i := 0; i < 2500; i++ {
		changes = append(changes, gitcli.Entry{Mode: "100644", ID: empty, Path: fmt.Sprintf("big/%s-%05d", long, i)})
	}
	for i := 0; i < 300; i += 2 {
		changes = append(changes, gitcli.Entry{Path: fmt.Sprintf("gone/%03d", i)})
	}
	changes = append(changes, gitcli.Entry{Mode: "100644", ID: empty, Path: "new/dir/f"})
	checkCommit(t, dir, head, "many", changes, func(spec gitcli.ChangeSpec) (string, string, error) { return g.CommitChanges(ctx, spec) })
}

// indexTree is the tree git's index makes of parent with changes.
func indexTree(t *testing.T, dir, parent string, changes []gitcli.Entry) string {
	t.Helper()
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	git := func(stdin string, args ...string) string {
		res, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "git", Args: append([]string{"-C", dir}, args...), Env: env, Stdin: strings.NewReader(stdin)})
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	git("", "read-tree", parent)
	var b strings.Builder
	for _, e := range changes {
		if e.ID == "" {
			fmt.Fprintf(&b, "0 %s\t%s\x00", strings.Repeat("0", 40), e.Path)
		}
	}
	for _, e := range changes {
		if e.ID != "" {
			fmt.Fprintf(&b, "%s %s\t%s\x00", e.Mode, e.ID, e.Path)
		}
	}
	git(b.String(), "update-index", "-z", "--add", "--remove", "--replace", "--index-info")
	return git("", "write-tree")
}
