package gitcli_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// ReadBlobs gives each object its type, size and content in order, with
// or without the content, and says which are missing; WorkTreeAttrs
// reads a work tree's .gitattributes as hashing does.
func TestReadBlobsAndWorkTreeAttrs(t *testing.T) {
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), testenv.Files{"a.txt": "alpha\n", "b.bin": "\x00\r\n"})
	g := gitcli.New(dir, testenv.Exec())
	a := testenv.Git(t, dir, "rev-parse", "HEAD:a.txt")
	b := testenv.Git(t, dir, "rev-parse", "HEAD:b.bin")
	head := testenv.Git(t, dir, "rev-parse", "HEAD")
	missing := strings.Repeat("0", 39) + "1"
	ids := []string{a, missing, b, head, a}
	for _, content := range []bool{true, false} {
		var got []string
		err := g.ReadBlobs(context.Background(), ids, content, func(id, typ string, size int64, r io.Reader) error {
			body, err := io.ReadAll(r)
			if typ != "blob" {
				body = nil // a commit's text: read, not compared
			}
			if typ == "commit" {
				size = 0 // its length depends on the time
			}
			got = append(got, fmt.Sprintf("%s %d %q", typ, size, body))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{`blob 6 "alpha\n"`, `missing 0 ""`, `blob 3 "\x00\r\n"`, `commit 0 ""`, `blob 6 "alpha\n"`}
		if !content {
			want = []string{`blob 6 ""`, `missing 0 ""`, `blob 3 ""`, `commit 0 ""`, `blob 6 ""`}
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("content %v: got %q, want %q", content, got, want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitattributes"), []byte("*.bin filter=lfs -text\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	attrs, err := g.WorkTreeAttrs(context.Background(), filepath.Join(dir, ".git"), dir, []string{"a.txt", "x/b.bin", "new\nline.bin"}, "filter", "text")
	if err != nil {
		t.Fatal(err)
	}
	if attrs["a.txt"]["filter"] != "unspecified" || attrs["x/b.bin"]["filter"] != "lfs" || attrs["x/b.bin"]["text"] != "unset" || attrs["new\nline.bin"]["filter"] != "lfs" {
		t.Errorf("attributes %v", attrs)
	}
}

// Many files are hashed by several processes, their ids in the order of
// the paths, as one process gives them.
func TestHashWorkTreeFilesInParallel(t *testing.T) {
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), testenv.Files{"README.md": "hi\n"})
	g := gitcli.New(dir, testenv.Exec())
	var paths []string
	for i := range 1000 {
		p := fmt.Sprintf("d%d/f%d.txt", i%7, i)
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(fmt.Sprintf("file %d\n", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	ids, err := g.HashWorkTreeFiles(context.Background(), filepath.Join(dir, ".git"), dir, paths)
	if err != nil || len(ids) != len(paths) {
		t.Fatalf("%d ids, %v", len(ids), err)
	}
	for _, i := range []int{0, 1, 249, 250, 499, 500, 998, 999} {
		if want := testenv.Git(t, dir, "hash-object", paths[i]); ids[i] != want {
			t.Errorf("%s: id %s, want %s", paths[i], ids[i], want)
		}
	}
}
