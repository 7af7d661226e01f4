package gitcli_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// CheckoutTar writes what a checkout writes: export-ignore and
// export-subst mean nothing, line endings and the user's smudge filter
// apply. With yours, the tree's own attributes pick nothing: a filter the
// tree names runs only where the user's work tree names it too.
func TestCheckoutTarIsACheckout(t *testing.T) {
	mark := filepath.Join(t.TempDir(), "smudged")
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), testenv.Files{
		".gitattributes": "/tests export-ignore\nver.txt export-subst\n*.crlf text eol=crlf\n*.up filter=up\n",
		"tests/a_test":   "t\n",
		"ver.txt":        "$Format:%H$\n",
		"x.crlf":         "a\nb\n",
		"y.up":           "shout\n",
		"link":           "", // made a symlink below
	})
	testenv.Git(t, dir, "config", "filter.up.smudge", "touch "+mark+"; tr a-z A-Z")
	testenv.Git(t, dir, "config", "filter.up.clean", "cat")
	if err := os.Remove(filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("ver.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "-A")
	testenv.Git(t, dir, "commit", "-qm", "link")
	head := testenv.Git(t, dir, "rev-parse", "HEAD")
	g := gitcli.New(dir, testenv.Exec())
	archive := filepath.Join(dir, ".git", "litterbox", "archive", "repo")
	if err := gitcli.ArchiveDir(filepath.Join(dir, ".git"), archive); err != nil {
		t.Fatal(err)
	}

	got := checkoutFiles(t, g, archive, head, false)
	want := map[string]string{
		".gitattributes": "/tests export-ignore\nver.txt export-subst\n*.crlf text eol=crlf\n*.up filter=up\n",
		"tests/":         "dir", "tests/a_test": "t\n", "ver.txt": "$Format:%H$\n",
		"x.crlf": "a\r\nb\r\n", "y.up": "SHOUT\n", "link": "-> ver.txt",
	}
	checkFiles(t, "the tree's attributes", got, want)
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the smudge filter the tree and the user name did not run: %v", err)
	}

	// The user's work tree stops naming the filter: with yours, the
	// tree's "*.up filter=up" runs nothing.
	os.Remove(mark)
	if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.crlf text eol=crlf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got = checkoutFiles(t, g, archive, head, true)
	want["y.up"] = "shout\n"
	checkFiles(t, "the user's attributes", got, want)
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the user's smudge filter ran on a path only the tree gives it (%v)", err)
	}
}

// A repository git finds only by --git-dir and --work-tree (GIT_DIR, core.worktree)
// is written the same: CheckoutTar names its own git dir.
func TestCheckoutTarWithGitDirOptions(t *testing.T) {
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), testenv.Files{"a": "a\n"})
	g := gitcli.New(dir, testenv.Exec())
	g.Global = []string{"--git-dir=" + filepath.Join(dir, ".git"), "--work-tree=" + dir}
	archive := filepath.Join(t.TempDir(), "archive")
	if err := gitcli.ArchiveDir(filepath.Join(dir, ".git"), archive); err != nil {
		t.Fatal(err)
	}
	head := testenv.Git(t, dir, "rev-parse", "HEAD")
	checkFiles(t, "named git dir", checkoutFiles(t, g, archive, head, false), map[string]string{"a": "a\n"})
}

func checkoutFiles(t *testing.T, g *gitcli.Client, archive, rev string, yours bool) map[string]string {
	t.Helper()
	var buf bytes.Buffer
	if err := g.CheckoutTar(context.Background(), archive, rev, yours, &buf); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			got[h.Name] = "dir"
		case tar.TypeSymlink:
			got[h.Name] = "-> " + h.Linkname
		case tar.TypeReg:
			body, _ := io.ReadAll(tr)
			got[h.Name] = string(body)
			if h.Mode != 0o644 {
				t.Errorf("%s: mode %o, want 644", h.Name, h.Mode)
			}
		}
	}
}

func checkFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s is %q, want %q", what, name, got[name], w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok && !strings.HasPrefix(name, "pax") {
			t.Errorf("%s: unexpected %s", what, name)
		}
	}
}
