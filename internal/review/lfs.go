package review

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
)

// pointerMax bounds what is read as a possible LFS pointer: a pointer is
// about 130 bytes, and git-lfs reads none over 1024.
const pointerMax = 1024

// pointerPrefix starts every LFS pointer (the spec's first line).
var pointerPrefix = []byte("version https://git-lfs.github.com/spec/v1\n")

// IsPointer reports whether a blob's content is an LFS pointer.
func IsPointer(b []byte) bool {
	return len(b) <= pointerMax && bytes.HasPrefix(b, pointerPrefix) && bytes.Contains(b, []byte("\noid sha256:"))
}

// pointersLeft names the files the apply since saved (HEAD, or with squash
// the index) wrote as LFS pointers: paths it changed to a pointer blob
// whose work tree file still holds that pointer, because its object is not
// on this machine and Sealed git fetches none.
func pointersLeft(ctx context.Context, g *gitcli.Client, saved string, squash bool) ([]string, error) {
	args := []string{"diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--diff-filter=AMT"}
	if squash {
		args = append(args, "--cached", saved)
	} else {
		args = append(args, saved, "HEAD")
	}
	out, err := g.Output(ctx, args...)
	if err != nil {
		return nil, err
	}
	byID := map[string][]string{}
	var ids []string
	// Each change is ":old new oldid newid status" and its path, each
	// ended by a NUL.
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		f := strings.Fields(fields[i])
		if len(f) != 5 || (f[1] != "100644" && f[1] != "100755") {
			continue
		}
		if byID[f[3]] == nil {
			ids = append(ids, f[3])
		}
		byID[f[3]] = append(byID[f[3]], fields[i+1])
	}
	pointers, err := smallPointers(ctx, g, ids)
	if err != nil || len(pointers) == 0 {
		return nil, err
	}
	top, err := g.Output(ctx, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(top)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var left []string
	for id, content := range pointers {
		for _, p := range byID[id] {
			if holds(root, p, content) {
				left = append(left, p)
			}
		}
	}
	return left, nil
}

// smallPointers reads the blobs of ids small enough to be pointers, and
// keeps those that are.
func smallPointers(ctx context.Context, g *gitcli.Client, ids []string) (map[string][]byte, error) {
	var small []string
	err := g.ReadBlobs(ctx, ids, false, func(id, typ string, size int64, _ io.Reader) error {
		if typ == "blob" && size <= pointerMax {
			small = append(small, id)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	err = g.ReadBlobs(ctx, small, true, func(id, typ string, size int64, r io.Reader) error {
		b, err := io.ReadAll(r)
		if err == nil && IsPointer(b) {
			out[id] = b
		}
		return err
	})
	return out, err
}

// holds reports whether the regular file at p under root (never through a
// link: os.Root) holds exactly content.
func holds(root *os.Root, p string, content []byte) bool {
	if fi, err := root.Lstat(p); err != nil || !fi.Mode().IsRegular() || fi.Size() != int64(len(content)) {
		return false
	}
	got, err := root.ReadFile(p)
	return err == nil && bytes.Equal(got, content)
}
