package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// many is a call of n new files, new/<i>.txt, with body(i).
func many(n int, body func(i int) string) *fakeHelper {
	f := &fakeHelper{files: map[string]string{}}
	for i := range n {
		p := fmt.Sprintf("new/%d.txt", i)
		f.changes = append(f.changes, changed(p, body(i)))
		f.files[p] = body(i)
	}
	return f
}

// A call of many files stores them as git add would, the plain ones (over
// 200 here) through fast-import, byte for byte; files with a CR under
// text=auto and files under ident as hash-object does, a file over the
// memory bound and a name hash-object cannot read by line as before.
func TestTakeImportsManyFiles(t *testing.T) {
	const attrs = "new/1?.txt text=auto\nnew/2?.txt ident\n"
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	if err := writeUnder(s.Rules, ".gitattributes", []byte(attrs)); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("big\n", maxImported/4+1)
	f := many(4*minImport, func(i int) string {
		switch {
		case i == 5:
			return big
		case i >= 10 && i < 20:
			return fmt.Sprintf("crlf %d\r\n", i)
		}
		return fmt.Sprintf("$Id$ plain %d\n", i)
	})
	odd := "new/line\nbreak.txt"
	f.changes = append(f.changes, changed(odd, "odd\n"))
	f.files[odd] = "odd\n"
	take(t, s, st, f)
	if len(f.asked) != 4*minImport+1 {
		t.Fatalf("asked %d", len(f.asked))
	}
	// Fast-import stored them: a pack, which hash-object never writes.
	if packs, _ := filepath.Glob(filepath.Join(s.GitDir, "objects", "pack", "*.pack")); len(packs) != 1 {
		t.Errorf("packs %v; want the one fast-import wrote", packs)
	}
	// What git add stores: the same files hashed by git in a work tree.
	wt := t.TempDir()
	files := map[string]string{".gitattributes": attrs}
	for p, body := range f.files {
		files[p] = body
	}
	for p, body := range files {
		if err := os.MkdirAll(filepath.Join(wt, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wt, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p := range f.files {
		want := testenv.Git(t, wt, "--git-dir="+s.GitDir, "--work-tree=.", "hash-object", "--", p)
		if got := testenv.Git(t, s.Git.Dir, "rev-parse", "litterbox/work:"+p); got != want {
			t.Errorf("%q stored as %s, git add stores %s", p, got, want)
		}
	}
	if got := testenv.Git(t, s.Git.Dir, "cat-file", "-s", "litterbox/work:new/11.txt"); got != "8" {
		t.Errorf("new/11.txt is %s bytes; want 8, its CR gone", got)
	}
	if got := testenv.Git(t, s.Git.Dir, "show", "litterbox/work:new/7.txt"); got != "$Id$ plain 7" {
		t.Errorf("new/7.txt: %q", got)
	}
}

// A file holding a secret's value among many is withheld, and no object
// of it is stored: it is looked at before fast-import gets it.
func TestTakeImportsNoSecret(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	s.Secrets = hunter2(t)
	f := many(minImport, func(i int) string { return fmt.Sprintf("plain %d\n", i) })
	leak := "token=hunter2-long-value\n"
	f.changes = append(f.changes, changed("new/leak.txt", leak))
	f.files["new/leak.txt"] = leak
	taken := take(t, s, st, f)
	if len(taken.Withheld) != 1 || taken.Withheld[0].Secret != "TOKEN" || strings.Contains(tree(t, s), "leak") {
		t.Errorf("withheld %+v; tree:\n%s", taken.Withheld, tree(t, s))
	}
	id := blob(leak)
	if _, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "git", Args: []string{"-C", s.Git.Dir, "cat-file", "-e", fmt.Sprintf("%x", id)}}); err == nil {
		t.Error("the repository holds a blob of the secret file")
	}
	if got := testenv.Git(t, s.Git.Dir, "show", "litterbox/work:new/7.txt"); got != "plain 7" {
		t.Errorf("new/7.txt: %q", got)
	}
}

// Under git's old crlf attribute a file with a CR is stored as git add
// stores it, normalized, though the call is large.
func TestTakeImportsOldCRLFAsGitAdd(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	if err := writeUnder(s.Rules, ".gitattributes", []byte("* crlf\n")); err != nil {
		t.Fatal(err)
	}
	f := many(minImport, func(i int) string { return fmt.Sprintf("line %d\r\n", i) })
	take(t, s, st, f)
	if got := testenv.Git(t, s.Git.Dir, "cat-file", "-s", "litterbox/work:new/3.txt"); got != "7" {
		t.Errorf("new/3.txt stored in %s bytes; want 7, the CR gone", got)
	}
}
