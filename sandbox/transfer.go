package sandbox

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/litterbox-dev/litterbox/helper/protocol"
)

// Upload copies a host file or directory into the sandbox at dest (the exact
// path it gets; relative to /src), modes kept, and commits it like write.
func (m *Manager) Upload(ctx context.Context, name, src, dest string) (*ActResult, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	abs, err := writablePath(dest)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(src); err != nil {
		return nil, fmt.Errorf("upload source: %w", err)
	}
	tmp, err := os.CreateTemp(ensureDir(m.snapDir("tmp")), "upload-*.tar")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	uid, gid, err := m.sandboxIDs(slug)
	if err != nil {
		return nil, err
	}
	if err := TarPath(tmp, src, path.Base(abs), uid, gid); err != nil {
		return nil, fmt.Errorf("reading %s: %w", src, err)
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	res, err := m.act(ctx, slug, action{op: protocol.OpUpload, arg: abs, content: tmp, size: size, message: commitMessage("upload", display(abs))})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("upload to %s: %s", display(abs), firstLine(res.Stderr))
	}
	return res, nil
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

// Download copies a file or directory out of the sandbox (src relative to
// /src) to the host path dest (the exact path it gets), modes kept. Nothing is
// ever written outside dest.
func (m *Manager) Download(ctx context.Context, name, src, dest string) (int, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return 0, err
	}
	abs := ResolvePath(src)
	if abs == "/" {
		return 0, errors.New("download of / is not supported; name a directory")
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := m.helperTool(ctx, slug, pw, "tar", abs)
		pw.CloseWithError(errOrEOF(err))
		done <- err
	}()
	n, extractErr := ExtractTar(pr, path.Base(abs), dest)
	pr.CloseWithError(errors.New("extraction ended"))
	err = <-done
	// The sandbox refusing (no such container, no such file) is the cause;
	// else a refused archive is, and the exec failing on the closed pipe
	// follows.
	if err != nil && (extractErr == nil || errors.Is(err, ErrNoSuchFile)) {
		return n, err
	}
	return n, extractErr
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
