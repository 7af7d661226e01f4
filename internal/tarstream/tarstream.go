// Package tarstream rewrites and extracts tar streams between the host and
// sandboxes without holding an archive in memory or on disk. Archives from a
// sandbox are untrusted: extraction never writes outside its destination.
package tarstream

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
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

// ErrStopped ends one stage of a pipeline of streams (git archive, a
// rewrite, a copy) because another stage failed or finished: the stage that
// failed reports the cause.
var ErrStopped = errors.New("stopped because another stage of the copy failed")

// OrStopped is err, or ErrStopped for a stage that ended without one, to
// close the pipe to its neighbour with.
func OrStopped(err error) error {
	if err == nil {
		return ErrStopped
	}
	return err
}
