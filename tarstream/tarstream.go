// Package tarstream rewrites and extracts tar streams between the host and
// sandboxes without holding an archive in memory or on disk. Archives from a
// sandbox are untrusted: extraction never writes outside its destination.
package tarstream

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Chown copies the tar stream in to out, rewriting every entry's owner to
// uid:gid. `docker cp` keeps the header's ids, and a container without
// CAP_CHOWN cannot fix them afterwards. Pax global headers (git archive's
// commit id) are dropped. It streams entry by entry; nothing is buffered whole.
// visit, when set, sees the content of every .gitignore and .gitattributes
// file on the way.
func Chown(out io.Writer, in io.Reader, uid, gid int, visit func(name string, data []byte) error) error {
	tr := tar.NewReader(in)
	tw := tar.NewWriter(out)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			// git archive pads to a whole record after the end marker; read it
			// so the writer does not fail on a closed pipe.
			if _, err := io.Copy(io.Discard, in); err != nil {
				return err
			}
			break
		}
		if err != nil {
			return err
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			continue
		}
		h.Uid, h.Gid = uid, gid
		h.Uname, h.Gname = "", ""
		// PAX records may carry their own uid/gid/uname/gname; drop them so the
		// rewritten fields win.
		for _, k := range []string{"uid", "gid", "uname", "gname"} {
			delete(h.PAXRecords, k)
		}
		h.Format = tar.FormatUnknown
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		var body io.Reader = tr
		if visit != nil && h.Typeflag == tar.TypeReg && (path.Base(h.Name) == ".gitignore" || path.Base(h.Name) == ".gitattributes") && h.Size <= 1<<20 {
			data, err := io.ReadAll(tr)
			if err != nil {
				return err
			}
			if err := visit(h.Name, data); err != nil {
				return err
			}
			body = bytes.NewReader(data)
		}
		if _, err := io.Copy(tw, body); err != nil {
			return err
		}
	}
	return tw.Close()
}

// TarPath writes src (a file, symlink or directory tree) as a tar whose top
// entry is named top, owned by uid:gid, modes kept.
func TarPath(w io.Writer, src, top string, uid, gid int) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		name := top
		if rel != "." {
			name = path.Join(top, filepath.ToSlash(rel))
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		link := ""
		if info.Mode()&fs.ModeSymlink != 0 {
			if link, err = os.Readlink(p); err != nil {
				return err
			}
		}
		h, err := tar.FileInfoHeader(info, link)
		if err != nil {
			return err
		}
		h.Name, h.Uid, h.Gid, h.Uname, h.Gname = name, uid, gid, "", ""
		if info.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// ExtractTar writes the entries of a tar whose top entry is top into dest
// (top itself becomes dest). Entries outside top, with ".." or absolute
// names, or that would write through a symlink, are refused: the archive
// comes from the sandbox and is not trusted. It returns how many entries it
// wrote.
func ExtractTar(r io.Reader, top, dest string) (int, error) {
	dest = filepath.Clean(dest)
	// DEST itself must not be a symlink: writing "into" it would follow it.
	if fi, err := os.Lstat(dest); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return 0, fmt.Errorf("refusing to write through %s: it is a symlink; remove it or choose another destination", dest)
	}
	tr := tar.NewReader(r)
	n := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		name := strings.TrimSuffix(h.Name, "/")
		rel, ok := strings.CutPrefix(name, top)
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			return n, fmt.Errorf("refusing archive entry %q outside %q", h.Name, top)
		}
		rel = strings.TrimPrefix(rel, "/")
		if rel != "" && (path.Clean(rel) != rel || strings.HasPrefix(rel, "../") || rel == ".." || strings.Contains(rel, "/../") || path.IsAbs(rel)) {
			return n, fmt.Errorf("refusing archive entry %q: it would escape %s", h.Name, dest)
		}
		target := dest
		if rel != "" {
			target = filepath.Join(dest, filepath.FromSlash(rel))
		}
		if err := noSymlinkBetween(dest, target); err != nil {
			return n, err
		}
		mode := os.FileMode(h.Mode) & os.ModePerm
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return n, err
			}
			if err := os.Chmod(target, mode|0o700); err != nil {
				return n, err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return n, err
			}
			os.Remove(target) // never write through an existing symlink
			f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
			if err != nil {
				return n, err
			}
			if _, err := io.Copy(f, tr); err != nil {
				f.Close()
				return n, err
			}
			if err := f.Close(); err != nil {
				return n, err
			}
			if err := os.Chmod(target, mode); err != nil {
				return n, err
			}
		case tar.TypeSymlink:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return n, err
			}
			os.Remove(target)
			// Kept as a link, never followed: later entries are checked
			// against it by noSymlinkBetween.
			if err := os.Symlink(h.Linkname, target); err != nil {
				return n, err
			}
		default:
			continue
		}
		n++
	}
}

// noSymlinkBetween refuses target if any directory from dest (excluded) down
// to target's parent is a symlink, which could lead outside dest.
func noSymlinkBetween(dest, target string) error {
	rel, err := filepath.Rel(dest, filepath.Dir(target))
	if err != nil || rel == "." {
		return err
	}
	cur := dest
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("refusing to write %s through the symlink %s", target, cur)
		}
	}
	return nil
}
