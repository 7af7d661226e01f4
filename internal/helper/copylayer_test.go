//go:build linux

package helper

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/helper/manifest"
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
// refused, at once, and left out as moved; a directory that became a link
// to / is not followed.
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
	c := startCopiers(src)
	for _, name := range []string{"link", "fifo", "dir", "dir/etc/hostname"} {
		if f, err := manifest.OpenRegularIn(src, name); err == nil {
			f.Close()
			t.Errorf("%s: opened as the regular file the walk saw", name)
		}
		c.copy(copyJob{name, filepath.Join(to, "x"), regular})
	}
	if st, err := c.wait(); err != nil || st != (CopyStats{Moved: 4}) {
		t.Errorf("copies of the swapped entries: %+v, %v; want all four left out as moved", st, err)
	}
	if _, err := fs.ReadDir(src.FS(), "dir"); err == nil {
		t.Error("a directory swapped for a link to / was listed through the root")
	}
	if got := listing(t, to); got != "./\n" {
		t.Errorf("to holds\n%s", got)
	}
}

// A failure to read an entry that is still there, of the kind the walk
// found, stops the copy: only what moved is left out.
func TestCopyStopsOnAFailureOfAnEntryThatDidNotMove(t *testing.T) {
	from := t.TempDir()
	files(t, from, map[string]string{"file": "x", "gone": "y"})
	src, err := os.OpenRoot(from)
	must(t, err)
	defer src.Close()
	info, err := os.Lstat(filepath.Join(from, "file"))
	must(t, err)
	c := startCopiers(src)
	failed := errors.New("unreadable")
	if err := c.leftOut("file", fs.FileInfoToDirEntry(info), failed); err != failed {
		t.Errorf("a failure on a file still there: %v, want it kept", err)
	}
	must(t, os.Remove(filepath.Join(from, "gone")))
	if err := c.leftOut("gone", fs.FileInfoToDirEntry(info), failed); err != nil {
		t.Errorf("a failure on a file removed since: %v, want it left out", err)
	}
	if err := c.leftOut(".", nil, failed); err != failed {
		t.Errorf("a failure on the walk's root: %v, want it kept", err)
	}
	if st, _ := c.wait(); st.Moved != 1 {
		t.Errorf("moved %d, want 1", st.Moved)
	}
}
