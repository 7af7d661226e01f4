package snapshot

import (
	"context"
	"crypto/sha1"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// fakeHelper plays the sandbox's side of a scan: it reports dirs and
// changes, then sends what the host selects from files (path -> content;
// a missing one is reported vanished). It records what the host asked.
type fakeHelper struct {
	dirs    protocol.Dirs
	changes []protocol.Change
	files   map[string]string
	asked   []string
	pruned  *protocol.Prune
	end     protocol.End
}

func (f *fakeHelper) run(t *testing.T, hostOut io.Reader, hostIn io.Writer) {
	r, w := protocol.NewReader(hostOut), protocol.NewWriter(hostIn)
	must := func(err error) {
		if err != nil {
			t.Error(err)
		}
	}
	must(w.Frame(protocol.TDirs, f.dirs.Encode()))
	p, err := r.Expect(protocol.TPrune)
	must(err)
	f.pruned, _ = protocol.DecodePrune(p)
	must(w.Frame(protocol.TChanges, (&protocol.Changes{List: f.changes}).Encode()))
	p, err = r.Expect(protocol.TSelect)
	must(err)
	sel, _ := protocol.DecodeSelect(p)
	f.asked = sel.Paths
	for _, path := range sel.Paths {
		body, ok := f.files[path]
		h := &protocol.FileHeader{Path: path, Mode: protocol.ModeRegular | 0o644, Size: uint64(len(body)), Missing: !ok}
		if !ok {
			h.Size = 0
		}
		must(w.Frame(protocol.TFile, h.Encode()))
		if ok {
			must(w.Raw(strings.NewReader(body), int64(len(body))))
		}
	}
	must(w.Frame(protocol.TEnd, f.end.Encode()))
}

func blob(s string) [20]byte {
	return sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(s), s)))
}

func changed(p, body string) protocol.Change {
	return protocol.Change{Op: protocol.Changed, Mode: protocol.ModeRegular | 0o644, Size: uint64(len(body)), ID: blob(body), Path: p}
}

// store makes a repository with files and a branch litterbox/work at HEAD.
func store(t *testing.T, files testenv.Files) (*Store, *State) {
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), files)
	testenv.Git(t, dir, "branch", "litterbox/work")
	g := gitcli.New(dir, testenv.Exec())
	state := filepath.Join(dir, ".git", "litterbox")
	s := &Store{
		Git: g, GitDir: filepath.Join(dir, ".git"), Ref: "refs/heads/litterbox/work", Branch: "litterbox/work",
		Rules: filepath.Join(state, "rules"), Tmp: filepath.Join(state, "tmp"),
		Author:    gitcli.Ident{Name: "work (litterbox)", Email: "litterbox@localhost"},
		Committer: func(context.Context) gitcli.Ident { return gitcli.Ident{Name: "T", Email: "t@example.com"} },
	}
	// create copies the tree's rule files into the mirror.
	for name, body := range files {
		if filepath.Base(name) == ".gitignore" {
			if err := writeUnder(s.Rules, name, []byte(body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s, &State{}
}

func take(t *testing.T, s *Store, st *State, f *fakeHelper) *Taken {
	t.Helper()
	hostOutR, hostOutW := io.Pipe()
	hostInR, hostInW := io.Pipe()
	done := make(chan struct{})
	go func() { defer close(done); f.run(t, hostOutR, hostInW) }()
	taken, err := s.Take(context.Background(), Conversation{R: protocol.NewReader(hostInR), W: protocol.NewWriter(hostOutW)}, st, "bash: test\n")
	hostOutW.Close()
	hostInR.Close()
	<-done
	if err != nil {
		t.Fatal(err)
	}
	return taken
}

func tree(t *testing.T, s *Store) string {
	return testenv.Git(t, s.Git.Dir, "ls-tree", "-r", "--name-only", "litterbox/work")
}

// What the helper says is checked: paths that leave the repository or
// name .git are dropped, an id that matches the index spares the transfer,
// and a file is stored only as the host hashed it.
func TestTakeTreatsTheHelperAsUntrusted(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n", "keep.txt": "same\n"})
	f := &fakeHelper{
		changes: []protocol.Change{
			changed("new.txt", "new\n"),
			changed("../escape.txt", "x"),
			changed(".git/config", "x"),
			changed("a/.GIT/hooks/pre-commit", "x"),
			changed("/abs", "x"),
			changed("keep.txt", "same\n"), // unchanged: its id matches
			{Op: protocol.Changed, Mode: protocol.ModeRegular | 0o644, ID: blob("lie"), Path: "README.md"},
		},
		files: map[string]string{"new.txt": "new\n", "README.md": "actually this\n"},
	}
	taken := take(t, s, st, f)
	if taken.Commit == "" {
		t.Fatal("no commit")
	}
	if strings.Join(f.asked, ",") != "README.md,new.txt" {
		t.Errorf("host asked for %v", f.asked)
	}
	if got := testenv.Git(t, s.Git.Dir, "show", "litterbox/work:README.md"); got != "actually this" {
		t.Errorf("README.md stored as %q: the host must hash what it receives, not trust the id", got)
	}
	if got := tree(t, s); got != "README.md\nkeep.txt\nnew.txt" {
		t.Errorf("tree:\n%s", got)
	}
}

// A directory whose own .gitignore ignores everything (pytest's cache) is
// skipped from now on, and nothing in it is committed.
func TestTakePrunesSelfIgnoredDirectories(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n", ".gitignore": "build/\n"})
	f := &fakeHelper{
		dirs: protocol.Dirs{New: []string{".pytest_cache", ".pytest_cache/v", "build", "src"},
			Rules: []protocol.RuleFile{{Path: ".pytest_cache/.gitignore", Data: []byte("# created by pytest\n*\n")}}},
		changes: []protocol.Change{changed(".pytest_cache/.gitignore", "*\n"), changed("src/a.go", "package a\n"), changed("build/out", "bin")},
		files:   map[string]string{"src/a.go": "package a\n"},
	}
	take(t, s, st, f)
	if strings.Join(f.pruned.Add, ",") != ".pytest_cache,build" || strings.Join(st.Prune, ",") != ".pytest_cache,build" {
		t.Errorf("pruned %v, state %v", f.pruned.Add, st.Prune)
	}
	if strings.Join(f.asked, ",") != "src/a.go" {
		t.Errorf("asked %v", f.asked)
	}
	// A rule change at the root lists every file again and asks about the
	// skipped directories: un-ignored, build is entered again.
	f = &fakeHelper{
		dirs:    protocol.Dirs{Rules: []protocol.RuleFile{{Path: ".gitignore", Data: []byte("")}}},
		files:   map[string]string{".gitignore": ""},
		changes: []protocol.Change{changed(".gitignore", "")},
	}
	take(t, s, st, f)
	if strings.Join(f.pruned.Requery, ",") != "" || len(f.pruned.Requery) != 1 || strings.Join(f.pruned.Expand, ",") != "build" {
		t.Errorf("after un-ignoring build: %+v", f.pruned)
	}
	if strings.Join(st.Prune, ",") != ".pytest_cache" {
		t.Errorf("prune %v", st.Prune)
	}
}

// Gitlinks are never turned into files, whatever the helper reports.
func TestTakeLeavesSubmodulesAlone(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	st.Submodules = []string{"vendor/lib"}
	f := &fakeHelper{
		changes: []protocol.Change{changed("vendor/lib/x.c", "x"), changed("vendor/lib", "file now"), changed("top.txt", "t\n")},
		files:   map[string]string{"top.txt": "t\n"},
	}
	take(t, s, st, f)
	if strings.Join(f.asked, ",") != "top.txt" {
		t.Errorf("asked %v", f.asked)
	}
}

// A tracked file that vanished between the scan and the transfer is
// removed; nothing is committed for an empty change list.
func TestTakeVanishedAndNothing(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n", "gone.txt": "g\n"})
	f := &fakeHelper{changes: []protocol.Change{changed("gone.txt", "changed\n")}}
	take(t, s, st, f)
	if got := tree(t, s); got != "README.md" {
		t.Errorf("tree %q", got)
	}
	if taken := take(t, s, st, &fakeHelper{}); taken.Commit != "" {
		t.Errorf("empty scan committed %s", taken.Commit)
	}
}

// Any name git can track is stored under that name, also those that
// hash-object's line-based input would misread.
func TestTakeOddNames(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	names := []string{"new\nline", `"quoted"`, "tab\there", "bad\xffbyte", "-dash", " lead"}
	f := &fakeHelper{files: map[string]string{}}
	for i, n := range names {
		body := fmt.Sprintf("%d\n", i)
		f.changes = append(f.changes, changed(n, body))
		f.files[n] = body
	}
	take(t, s, st, f)
	for i, n := range names {
		if got := testenv.Git(t, s.Git.Dir, "cat-file", "blob", "litterbox/work:"+n); got != fmt.Sprint(i) {
			t.Errorf("%q stored as %q", n, got)
		}
	}
}
