//go:build linux

package helper

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// files makes a tree under dir: a path ending in / is a directory, "->X"
// a symlink to X, "WHITEOUT" an overlay's whiteout, anything else a file
// of that content.
func files(t *testing.T, dir string, tree map[string]string) {
	t.Helper()
	for p, c := range tree {
		full := filepath.Join(dir, p)
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		switch {
		case strings.HasSuffix(p, "/"):
			must(t, os.MkdirAll(full, 0o755))
		case strings.HasPrefix(c, "->"):
			must(t, os.Symlink(c[2:], full))
		case c == "WHITEOUT":
			must(t, syscall.Mknod(full, syscall.S_IFCHR, 0))
		default:
			must(t, os.WriteFile(full, []byte(c), 0o644))
		}
	}
}

// listing is a tree as one line per entry: path, type and content.
func listing(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.IsDir():
			b.WriteString(rel + "/\n")
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			b.WriteString(rel + " ->" + target + "\n")
		default:
			data, _ := os.ReadFile(p)
			b.WriteString(rel + " " + string(data) + "\n")
		}
		return nil
	}))
	return b.String()
}

// A fork's /src starts as its lower layers show it and, given only what the
// source's upper layer holds, ends as the source's merged view: changed
// files, removed ones (whiteouts), a directory removed and made again
// (opaque: its lower entries hidden without a whiteout each), a file
// become a directory and the other way round, new files and links.
// Needs root, for the whiteout's mknod, as the copy container has.
func TestCopyLayerMakesTheMergedView(t *testing.T) {
	root := t.TempDir()
	upper, merged, to := filepath.Join(root, "upper"), filepath.Join(root, "merged"), filepath.Join(root, "to")
	// to starts as the lower layers show the tree.
	files(t, to, map[string]string{"a.txt": "a", "d/x": "x", "d/y": "y", "gone.txt": "g", "opq/1": "1", "opq/2": "2", "typ": "file", "was/dir/f": "f", "keep/k": "k"})
	files(t, upper, map[string]string{
		"a.txt": "A", "d/y": "WHITEOUT", "gone.txt": "WHITEOUT", "opq/3": "3", "typ/f": "now a dir",
		"was": "now a file", "new/n.txt": "n", "link": "->a.txt", "keep/": "",
	})
	files(t, merged, map[string]string{
		"a.txt": "A", "d/x": "x", "gone.txt": "WHITEOUT", "opq/3": "3", "typ/f": "now a dir",
		"was": "now a file", "new/n.txt": "n", "link": "->a.txt", "keep/k": "k",
	})
	must(t, os.Remove(filepath.Join(merged, "gone.txt")))
	st, err := copyLayer(upper, merged, to)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := listing(t, to), listing(t, merged); got != want {
		t.Errorf("to holds\n%s\nwant the merged view\n%s", got, want)
	}
	if st.Files != 6 || st.Bytes != int64(len("A3now a dirnow a filen")) {
		t.Errorf("stats %+v", st)
	}
}

// What a copy reads may change under it: a file the walk saw that is a
// link (to a file outside the tree) or a fifo by the time it is opened is
// refused, at once; a directory that became a link to / is not followed.
func TestCopyReadsNothingALinkSwappedInLeadsTo(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	must(t, os.WriteFile(outside, []byte("secret"), 0o600))
	files(t, from, map[string]string{"link": "->" + outside, "dir": "->/", "file": "x"})
	must(t, syscall.Mkfifo(filepath.Join(from, "fifo"), 0o644))
	src, err := os.OpenRoot(from)
	must(t, err)
	defer src.Close()
	regular, err := os.Lstat(filepath.Join(from, "file"))
	must(t, err)
	for _, name := range []string{"link", "fifo", "dir"} {
		if _, err := copyFile(src, name, filepath.Join(to, name), regular); err == nil {
			t.Errorf("%s: copied as the regular file the walk saw", name)
		}
	}
	if _, err := copyFile(src, "dir/etc/hostname", filepath.Join(to, "hostname"), regular); err == nil {
		t.Error("a file under a directory swapped for a link to / was copied")
	}
	merged, err := os.OpenRoot(from)
	must(t, err)
	defer merged.Close()
	must(t, os.Mkdir(filepath.Join(to, "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(to, "d", "kept"), nil, 0o644))
	if err := hideLike(merged, "dir", filepath.Join(to, "d")); err == nil {
		t.Error("hideLike read / through a link")
	}
	if got := listing(t, to); strings.Contains(got, "secret") || !strings.Contains(got, "d/kept") {
		t.Errorf("to holds\n%s", got)
	}
}
