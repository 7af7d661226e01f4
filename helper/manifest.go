//go:build linux

package helper

import (
	"bufio"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/litterbox-dev/litterbox/helper/protocol"
)

// entry is what a manifest remembers of one path under /src.
type entry struct {
	mode         uint32
	size         int64
	mtime, ctime int64 // nanoseconds
	ino          uint64
	// racy: changed so close to the scan that a later change within the
	// same timestamp tick would look the same; id is then its content's
	// blob id, checked again by the next scan.
	racy bool
	id   [20]byte
}

func (e *entry) kind() uint32 { return e.mode & protocol.ModeType }

// sameStat reports whether two scans saw the same file.
func (e *entry) sameStat(o *entry) bool {
	return e.mode == o.mode && e.size == o.size && e.mtime == o.mtime && e.ctime == o.ctime && e.ino == o.ino
}

// manifest maps paths relative to /src to what a scan saw.
type manifest map[string]*entry

// racyWindow: a file changed this close to the scan is checked by content
// next time. Timestamps come from a coarse kernel clock; a second is ample.
const racyWindow = time.Second

// walker scans a tree without following symlinks or crossing into another
// file system, with one stat per entry relative to its directory.
type walker struct {
	root  string
	dev   uint64
	prune map[string]bool
	out   manifest
}

func newWalker(root string, prune []string) (*walker, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(root, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	w := &walker{root: root, dev: st.Dev, prune: map[string]bool{}, out: manifest{}}
	for _, p := range prune {
		w.prune[p] = true
	}
	return w, nil
}

// walk adds rel (a directory, "" for the root) and everything below it.
func (w *walker) walk(rel string) error {
	stack := []string{rel}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		subdirs, err := w.readDir(dir)
		if err != nil {
			return err
		}
		stack = append(stack, subdirs...)
	}
	return nil
}

func (w *walker) readDir(rel string) ([]string, error) {
	abs := w.root
	if rel != "" {
		abs += "/" + rel
	}
	fd, err := syscall.Open(abs, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		// Gone since its parent was read, or not readable by the sandbox
		// user: nothing under it can be reported.
		return nil, nil
	}
	f := os.NewFile(uintptr(fd), abs)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, nil
	}
	var subdirs []string
	for _, name := range names {
		if name == ".git" {
			continue // never a path git stores
		}
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		var st syscall.Stat_t
		if err := fstatat(fd, abs, name, &st); err != nil {
			continue
		}
		e := statEntry(&st)
		switch e.kind() {
		case protocol.ModeDir:
			if w.prune[p] || st.Dev != w.dev {
				continue
			}
			subdirs = append(subdirs, p)
		case protocol.ModeRegular, protocol.ModeSymlink:
		default:
			continue // fifos, sockets, devices: git stores none
		}
		w.out[p] = e
	}
	return subdirs, nil
}

func statEntry(st *syscall.Stat_t) *entry {
	return &entry{
		mode:  st.Mode,
		size:  st.Size,
		mtime: st.Mtim.Sec*1e9 + st.Mtim.Nsec,
		ctime: st.Ctim.Sec*1e9 + st.Ctim.Nsec,
		ino:   st.Ino,
	}
}

// blobID is git's id of a blob with the content of the file at abs (of its
// target, for a symlink).
func blobID(abs string, e *entry) ([20]byte, error) {
	var id [20]byte
	if e.kind() == protocol.ModeSymlink {
		target, err := os.Readlink(abs)
		if err != nil {
			return id, err
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00%s", len(target), target)
		copy(id[:], h.Sum(nil))
		return id, nil
	}
	f, err := os.Open(abs)
	if err != nil {
		return id, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return id, err
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", fi.Size())
	n, err := io.Copy(h, f)
	if err != nil {
		return id, err
	}
	if n != fi.Size() {
		return id, errors.New("changed while read")
	}
	copy(id[:], h.Sum(nil))
	return id, nil
}

// Manifests live in the sandbox's /tmp, which a restart empties: then the
// next scan has nothing to compare with and reports everything (Full).
const stateDir = "/tmp/.litterbox"

func manifestPath(gen uint64) string { return stateDir + "/m." + strconv.FormatUint(gen, 10) }

const manifestMagic = "LBXM1\n"

func loadManifest(gen uint64) (manifest, error) {
	f, err := os.Open(manifestPath(gen))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 256<<10)
	magic := make([]byte, len(manifestMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != manifestMagic {
		return nil, errors.New("not a manifest")
	}
	m := manifest{}
	for {
		n, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil || n > 1<<16 {
			return nil, errors.New("corrupt manifest")
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(r, name); err != nil {
			return nil, err
		}
		var fixed [4 + 8*4 + 1 + 20]byte
		if _, err := io.ReadFull(r, fixed[:]); err != nil {
			return nil, err
		}
		e := &entry{
			mode:  binary.LittleEndian.Uint32(fixed[0:]),
			size:  int64(binary.LittleEndian.Uint64(fixed[4:])),
			mtime: int64(binary.LittleEndian.Uint64(fixed[12:])),
			ctime: int64(binary.LittleEndian.Uint64(fixed[20:])),
			ino:   binary.LittleEndian.Uint64(fixed[28:]),
			racy:  fixed[36] == 1,
		}
		copy(e.id[:], fixed[37:])
		m[string(name)] = e
	}
}

// save writes the manifest as generation gen (atomically) and removes every
// other generation but keep.
func (m manifest) save(gen, keep uint64) error {
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	tmp := manifestPath(gen) + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	w.WriteString(manifestMagic)
	var buf []byte
	for p, e := range m {
		buf = binary.AppendUvarint(buf[:0], uint64(len(p)))
		buf = append(buf, p...)
		buf = binary.LittleEndian.AppendUint32(buf, e.mode)
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.size))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.mtime))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(e.ctime))
		buf = binary.LittleEndian.AppendUint64(buf, e.ino)
		if e.racy {
			buf = append(buf, 1)
		} else {
			buf = append(buf, 0)
		}
		buf = append(buf, e.id[:]...)
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, manifestPath(gen)); err != nil {
		return err
	}
	names, _ := os.ReadDir(stateDir)
	for _, n := range names {
		if n.Name() != path.Base(manifestPath(gen)) && n.Name() != path.Base(manifestPath(keep)) && strings.HasPrefix(n.Name(), "m.") {
			os.Remove(stateDir + "/" + n.Name())
		}
	}
	return nil
}

// under reports whether p is dir or inside it; "" is the root.
func under(p, dir string) bool {
	return dir == "" || p == dir || strings.HasPrefix(p, dir+"/")
}

func underAny(p string, dirs []string) bool {
	for _, d := range dirs {
		if under(p, d) {
			return true
		}
	}
	return false
}

func sortedKeys(m manifest) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
