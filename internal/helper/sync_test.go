//go:build linux

package helper

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/replay"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// A sync's delta, applied to a checkout of one tree, leaves a checkout of
// the other: changes, new files, removals (the directories they empty
// too), the executable bit, links as links, a file that becomes a
// directory, names that are not UTF-8; ignored files stay.
func TestApplyTreeTurnsOneCheckoutIntoAnother(t *testing.T) {
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), testenv.Files{
		"a.txt": "a\n", "gone/only.txt": "x\n", "becomes": "file\n", "keep/k.txt": "k\n", "run.sh": "echo\n",
	})
	from := testenv.Git(t, dir, "rev-parse", "HEAD")
	testenv.Git(t, dir, "rm", "-q", "-r", "gone", "becomes")
	for p, body := range map[string]string{"a.txt": "A\n", "becomes/inner.txt": "in\n", "bad\xffname.txt": "b\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, dir, "add", "-A")
	testenv.Git(t, dir, "update-index", "--chmod=+x", "run.sh")
	testenv.Git(t, dir, "commit", "-q", "-m", "to")
	to := testenv.Git(t, dir, "rev-parse", "HEAD")

	src := sandboxDir(t, map[string]string{"a.txt": "a\n", "gone/only.txt": "x\n", "becomes": "file\n", "keep/k.txt": "k\n", "run.sh": "echo\n", "keep/ignored.log": "mine\n"})
	var tarball bytes.Buffer
	if _, err := replay.Delta(context.Background(), gitcli.New(dir, testenv.Exec()), from, to, &tarball); err != nil {
		t.Fatal(err)
	}
	if err := applyTree(&tarball); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"a.txt": "A\n", "becomes/inner.txt": "in\n", "bad\xffname.txt": "b\n", "keep/k.txt": "k\n", "keep/ignored.log": "mine\n"} {
		if got, err := os.ReadFile(filepath.Join(src, p)); err != nil || string(got) != want {
			t.Errorf("%q: %q %v, want %q", p, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(src, "gone")); !os.IsNotExist(err) {
		t.Errorf("the emptied directory is still there: %v", err)
	}
	if target, err := os.Readlink(filepath.Join(src, "link")); err != nil || target != "a.txt" {
		t.Errorf("link: %q %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(src, "run.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh lost its executable bit: %v %v", fi, err)
	}
}
