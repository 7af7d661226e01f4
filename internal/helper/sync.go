//go:build linux

package helper

import (
	"archive/tar"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/tarstream"
)

// applyTree brings /src to the tree a sync moved the sandbox's branch to:
// r is a tar of that tree's changes, removals first (an entry of type
// protocol.SyncRemove), then the files and links to write in
// place of what is there. Everything is done under an os.Root of /src, so
// no name leads out of it and no link is followed. A directory a removal
// leaves empty goes too, as a checkout leaves none.
func applyTree(r io.Reader) error {
	rt, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer rt.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if h.Typeflag == protocol.SyncRemove {
			if err := removeFile(rt, name); err != nil {
				return err
			}
			continue
		}
		if err := tarstream.WriteEntry(rt, name, h, tr); err != nil {
			return err
		}
	}
}

// removeFile removes the file or link name and then each parent directory
// it leaves empty.
func removeFile(rt *os.Root, name string) error {
	if err := rt.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for d := path.Dir(name); d != "." && d != "/"; d = path.Dir(d) {
		if rt.Remove(d) != nil {
			return nil // not empty, or not a directory: it stays
		}
	}
	return nil
}
