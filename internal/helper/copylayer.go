//go:build linux

package helper

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// copyLayer makes to, a fresh overlay over the lower layers of merged (an
// overlay of upper over them), hold what merged holds, by copying only
// what upper changed: a fork of a sandbox over a base tree (and a setup
// cache entry) costs what the source changed, not the size of the tree.
//
// It reads no overlay xattr (trusted.* needs a privilege the copy does
// not have) and writes no whiteout: it writes through to's own overlay,
// whose kernel makes both. Each entry of upper is copied from upper (the
// content merged shows); a whiteout (a 0/0 character device) removes its
// path from to; and a directory of upper that hides what the lower layers
// hold (an opaque one: removed, then made again) is found by comparing
// to's directory, which shows those layers, with merged's, whose missing
// entries are removed from to. What merged holds and upper does not comes
// from the lower layers, which to shows already.
func copyLayer(upper, merged, to string) (CopyStats, error) {
	// merged is read through a root too, as walkCopy reads upper.
	shown, err := os.OpenRoot(merged)
	if err != nil {
		return CopyStats{}, err
	}
	defer shown.Close()
	return walkCopy(upper, func(c *copies, rel string, info fs.FileInfo) error {
		dst := filepath.Join(to, rel)
		if whiteout(info) {
			return os.RemoveAll(dst)
		}
		if rel != "." && !(info.IsDir() && isDir(dst)) {
			// A changed file, or an entry of another type than lower's.
			if err := os.RemoveAll(dst); err != nil {
				return err
			}
		}
		if err := c.entry(rel, dst, info); err != nil || !info.IsDir() {
			return err
		}
		seen, err := fs.ReadDir(shown.FS(), rel)
		if err != nil {
			return c.leftOut(rel, fs.FileInfoToDirEntry(info), err)
		}
		return hideLike(seen, dst)
	})
}

// whiteout reports whether info is an overlay's mark of a removed path: a
// character device numbered 0/0.
func whiteout(info fs.FileInfo) bool {
	s, ok := info.Sys().(*syscall.Stat_t)
	return ok && info.Mode()&fs.ModeCharDevice != 0 && s.Rdev == 0
}

func isDir(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.IsDir()
}

// hideLike removes from dst, a directory just made or found in to, the
// entries its directory of merged does not show (shown): those an opaque
// directory hides. The directory's own entries from upper are copied after it.
func hideLike(shown []fs.DirEntry, dst string) error {
	under, err := os.ReadDir(dst)
	if err != nil || len(under) == 0 {
		return err // a directory new in upper hides nothing
	}
	seen := make(map[string]bool, len(shown))
	for _, e := range shown {
		seen[e.Name()] = true
	}
	for _, e := range under {
		if !seen[e.Name()] {
			if err := os.RemoveAll(filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}
