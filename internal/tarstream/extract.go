package tarstream

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ExtractTar writes the entries of a tar whose top entry is top into dest
// (top itself becomes dest) and returns how many entries it wrote. The
// archive comes from a sandbox and is not trusted, and dest may already hold
// what an earlier download put there (symlinks included), so it works in two
// passes over a spooled copy: the first checks every entry against the
// archive and the host and refuses the whole download, before any change,
// when an entry is outside top, names "..", or would create, write or chmod
// through a symlink; the second writes through an os.Root and changes modes
// only on descriptors opened with O_NOFOLLOW, so nothing outside dest is
// ever created, written or chmodded.
func ExtractTar(r io.Reader, top, dest string) (int, error) {
	dest, err := filepath.Abs(dest)
	if err != nil {
		return 0, err
	}
	if filepath.Dir(dest) == dest {
		return 0, fmt.Errorf("refusing to download to %s; name a new file or directory", dest)
	}
	spool, err := os.CreateTemp("", "litterbox-download-*.tar")
	if err != nil {
		return 0, err
	}
	defer os.Remove(spool.Name())
	defer spool.Close()
	if _, err := io.Copy(spool, r); err != nil {
		return 0, err
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	entries, err := planExtract(tar.NewReader(spool), top, dest)
	if err != nil {
		return 0, err
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return writeExtract(tar.NewReader(spool), entries, dest)
}

// entry is one archive member that passed the checks: rel is its path under
// dest ("" for dest itself), kind its tar type flag.
type entry struct {
	rel  string
	kind byte
}

// planExtract reads every header and returns the entries to write, or the
// first reason to refuse them all. made remembers what the archive itself
// creates, so a link it makes cannot be written through by a later entry.
func planExtract(tr *tar.Reader, top, dest string) ([]entry, error) {
	made := map[string]byte{}
	var out []entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		kind := h.Typeflag
		if kind != tar.TypeDir && kind != tar.TypeReg && kind != tar.TypeSymlink {
			continue
		}
		rel, err := entryRel(h.Name, top, dest)
		if err != nil {
			return nil, err
		}
		if err := checkEntry(made, dest, rel, kind); err != nil {
			return nil, err
		}
		made[rel] = kind
		out = append(out, entry{rel: rel, kind: kind})
	}
}

// entryRel is the slash path of an archive member under top, refusing
// members outside top and any that would climb out with "..".
func entryRel(name, top, dest string) (string, error) {
	trimmed := strings.TrimSuffix(name, "/")
	rel, ok := strings.CutPrefix(trimmed, top)
	if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
		return "", fmt.Errorf("refusing archive entry %q outside %q", name, top)
	}
	rel = strings.TrimPrefix(rel, "/")
	if rel != "" && (path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel)) {
		return "", fmt.Errorf("refusing archive entry %q: it would escape %s", name, dest)
	}
	return rel, nil
}

// checkEntry refuses an entry when a directory above it (dest included) is
// not a directory, on the host or in the archive, or when the entry itself
// would be created or chmodded through something already there.
func checkEntry(made map[string]byte, dest, rel string, kind byte) error {
	if rel != "" {
		parents := []string{""}
		parts := strings.Split(rel, "/")
		for i := 1; i < len(parts); i++ {
			parents = append(parents, strings.Join(parts[:i], "/"))
		}
		for _, p := range parents {
			if err := checkParent(made, dest, p); err != nil {
				return err
			}
		}
	}
	target := hostPath(dest, rel)
	if prev, ok := made[rel]; ok {
		if prev == tar.TypeDir && kind == tar.TypeDir {
			return nil
		}
		return refuse(target, "appears twice in the archive")
	}
	fi, err := os.Lstat(target)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0 && (kind == tar.TypeDir || rel == ""):
		return refuse(target, "is a symlink on the host")
	case fi.IsDir() && kind != tar.TypeDir:
		return refuse(target, "is a directory on the host")
	case !fi.IsDir() && fi.Mode()&fs.ModeSymlink == 0 && kind == tar.TypeDir:
		return refuse(target, "is a file on the host")
	}
	return nil
}

// checkParent refuses p as a directory to write into unless the archive
// made it a directory, or it is a real directory on the host, or it does not
// exist yet.
func checkParent(made map[string]byte, dest, p string) error {
	target := hostPath(dest, p)
	if kind, ok := made[p]; ok {
		if kind == tar.TypeSymlink {
			return refuse(target, "is a symlink made by the same archive")
		}
		if kind != tar.TypeDir {
			return refuse(target, "is a file made by the same archive")
		}
		return nil
	}
	fi, err := os.Lstat(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return refuse(target, "is a symlink on the host")
	case !fi.IsDir():
		return refuse(target, "is a file on the host")
	}
	return nil
}

func hostPath(dest, rel string) string {
	if rel == "" {
		return dest
	}
	return filepath.Join(dest, filepath.FromSlash(rel))
}

// refuse is the one-line error for a download stopped before any change.
func refuse(p, why string) error {
	return fmt.Errorf("download refused, nothing written: %q %s; remove it, or download to a new DEST", p, why)
}

// writeExtract writes the planned entries, read again from tr, inside an
// os.Root at dest's parent: even if the host changes between the passes,
// no name resolves outside it.
func writeExtract(tr *tar.Reader, entries []entry, dest string) (int, error) {
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return 0, err
	}
	root, err := os.OpenRoot(parent)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	top := filepath.Base(dest)
	n := 0
	for _, e := range entries {
		h, err := nextOf(tr, e.kind)
		if err != nil {
			return n, err
		}
		name := top
		if e.rel != "" {
			name = filepath.Join(top, filepath.FromSlash(e.rel))
		}
		if err := WriteEntry(root, name, h, tr); err != nil {
			return n, fmt.Errorf("writing %q: %w", filepath.Join(parent, name), err)
		}
		n++
	}
	return n, nil
}

// nextOf skips to the next member of the kinds the plan keeps; the spool is
// the archive the plan read, so it is the entry the plan checked.
func nextOf(tr *tar.Reader, kind byte) (*tar.Header, error) {
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, err
		}
		if h.Typeflag == kind {
			return h, nil
		}
		if h.Typeflag == tar.TypeDir || h.Typeflag == tar.TypeReg || h.Typeflag == tar.TypeSymlink {
			return nil, fmt.Errorf("archive changed between the passes at %q", h.Name)
		}
	}
}

// WriteEntry creates one entry of a tar (a directory, a regular file from
// body, or a symlink) at name under root, making its parent directories.
// A file or link already at name is replaced, never written through;
// modes are set through a descriptor opened with O_NOFOLLOW, never by
// name, so a chmod cannot land on a link's target; and the permission
// bits alone are applied, never setuid, setgid or sticky. It is the one
// way Litterbox writes a file from a tar, on the host and in a sandbox.
func WriteEntry(root *os.Root, name string, h *tar.Header, body io.Reader) error {
	mode := os.FileMode(h.Mode) & os.ModePerm
	if d := filepath.Dir(name); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	switch h.Typeflag {
	case tar.TypeDir:
		if err := root.Mkdir(name, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return chmodNoFollow(root, name, unix.O_DIRECTORY, mode|0o700)
	case tar.TypeReg:
		if err := removeLeaf(root, name); err != nil {
			return err
		}
		f, err := root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, body); err != nil {
			f.Close()
			return err
		}
		if err := f.Chmod(mode); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	default: // tar.TypeSymlink: kept as a link, never followed
		if err := removeLeaf(root, name); err != nil {
			return err
		}
		return root.Symlink(h.Linkname, name)
	}
}

// removeLeaf removes a file or link that an entry replaces; Remove acts on
// the link itself, never on what it points to.
func removeLeaf(root *os.Root, name string) error {
	if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// chmodNoFollow opens name without following a final symlink and changes
// the mode of what it opened.
func chmodNoFollow(root *os.Root, name string, flag int, mode os.FileMode) error {
	f, err := root.OpenFile(name, os.O_RDONLY|unix.O_NOFOLLOW|flag, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Chmod(mode)
}
