//go:build linux

package helper

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// entry is what a manifest remembers of one path under /src.
type entry struct {
	path         string
	mode         uint32
	size         int64
	mtime, ctime int64 // nanoseconds
	ino          uint64
	// racy: changed so close to the scan that a later change within the
	// same timestamp tick would look the same; id is then its content's
	// blob id, checked again by the next scan.
	racy bool
	id   [20]byte
	// dropped entries are left out of the saved manifest: pruned, or (with
	// recheck) sent short or gone while read, so the next scan reads their
	// directory again and reports them.
	dropped bool
	recheck bool
	// seen marks an old entry the new scan found.
	seen bool
	// kept: taken over from the old manifest unread, its directory
	// unchanged.
	kept bool
}

func (e *entry) kind() uint32 { return e.mode & protocol.ModeType }

// sameStat reports whether two scans saw the same file.
func (e *entry) sameStat(o *entry) bool {
	return e.mode == o.mode && e.size == o.size && e.mtime == o.mtime && e.ctime == o.ctime && e.ino == o.ino
}

// manifest is what one scan saw under /src, paths relative to it.
type manifest struct {
	list    []*entry
	byPath  map[string]*entry
	recheck []string
}

func (m *manifest) index() map[string]*entry {
	if m.byPath == nil {
		m.byPath = make(map[string]*entry, len(m.list))
		for _, e := range m.list {
			m.byPath[e.path] = e
		}
	}
	return m.byPath
}

// drop leaves p out of the saved manifest and has the next scan read its
// directory again, watched or not.
func (m *manifest) drop(p string) {
	if e := m.index()[p]; e != nil {
		e.dropped, e.recheck = true, true
	}
}

// manifest's recheck lists directories the next scan reads whatever the
// watcher says (see drop).

// racyMargin: timestamps come from the kernel's coarse clock, truncated to
// the file system's granularity; an entry stamped this close to the scan's
// clock reading is checked by content next time.
const racyMargin = 20 * time.Millisecond

// fsNow is the file systems' clock: the mtime of a file written now, as
// git compares entries with its index file's mtime.
func fsNow() int64 {
	f := stateDir + "/clock"
	if err := os.MkdirAll(stateDir, 0o700); err == nil {
		if err := os.WriteFile(f, []byte{'.'}, 0o600); err == nil {
			var st syscall.Stat_t
			if syscall.Stat(f, &st) == nil {
				return st.Mtim.Sec*1e9 + st.Mtim.Nsec
			}
		}
	}
	return time.Now().UnixNano()
}

func prune(dirs []string) map[string]bool {
	m := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		m[d] = true
	}
	return m
}

// walk lists rel (a directory under root, "" for root itself) and
// everything below it but the pruned directories, without following
// symlinks or crossing into another file system. Directories are read in
// parallel, each entry with one stat relative to its directory.
func walk(root string, pruned map[string]bool, rel string) ([]*entry, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(root, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	w := &walker{root: root, dev: st.Dev, prune: pruned, sem: make(chan struct{}, 8)}
	w.wg.Add(1)
	go w.dir(rel)
	w.wg.Wait()
	return w.out, nil
}

type walker struct {
	root  string
	dev   uint64
	prune map[string]bool
	sem   chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	out   []*entry
}

func (w *walker) dir(rel string) {
	defer w.wg.Done()
	w.sem <- struct{}{}
	entries, subdirs := w.readDir(rel)
	<-w.sem
	w.mu.Lock()
	w.out = append(w.out, entries...)
	w.mu.Unlock()
	for _, d := range subdirs {
		w.wg.Add(1)
		go w.dir(d)
	}
}

func (w *walker) readDir(rel string) (entries []*entry, subdirs []string) {
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
		e := statEntry(p, &st)
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
		entries = append(entries, e)
	}
	return entries, subdirs
}

func statEntry(p string, st *syscall.Stat_t) *entry {
	return &entry{
		path:  p,
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

// hashAll computes the blob ids of entries in parallel; one that cannot be
// read (gone since the walk) gets ok false.
func hashAll(root string, entries []*entry) (ok []bool) {
	ok = make([]bool, len(entries))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id, err := blobID(root+"/"+entries[i].path, entries[i])
				entries[i].id, ok[i] = id, err == nil
			}
		}()
	}
	for i := range entries {
		next <- i
	}
	close(next)
	wg.Wait()
	return ok
}

// Manifests live in the sandbox's /tmp, which a restart empties: then the
// next scan has nothing to compare with and reports everything (Full).
var stateDir = "/tmp/.litterbox" // a var: unit tests point it at a temp dir

func manifestPath(gen uint64) string { return stateDir + "/m." + strconv.FormatUint(gen, 10) }

const manifestMagic = "LBXM2\n"

// loadManifest reads generation gen, nil when there is none (or it is not
// one this helper wrote). Every call reads it before its scan, so it is
// parsed in place: the file read whole, its entries in one allocation and
// their paths substrings of one string (38,000 entries: 19 ms read through
// a buffered reader entry by entry, a few ms so).
func loadManifest(gen uint64) *manifest {
	data, err := os.ReadFile(manifestPath(gen))
	if err != nil || !bytes.HasPrefix(data, []byte(manifestMagic)) {
		return nil
	}
	list, ok := parseEntries(data[len(manifestMagic):])
	if !ok {
		return nil
	}
	m := &manifest{list: list}
	if data, err := os.ReadFile(manifestPath(gen) + ".recheck"); err == nil {
		for _, d := range strings.Split(string(data), "\x00") {
			if d != "" {
				m.recheck = append(m.recheck, d)
			}
		}
	}
	return m
}

// loadIndexed is loadManifest with the index by path made too: the scan
// needs both, and they are made while the action runs.
func loadIndexed(gen uint64) *manifest {
	m := loadManifest(gen)
	if m != nil {
		m.index()
	}
	return m
}

// entryFixed is the size of an entry's fields after its path: mode, size,
// mtime, ctime, inode, racy and the content's id.
const entryFixed = 4 + 8*4 + 1 + 20

// parseEntries reads the entries save wrote; false when b is not a whole
// list of them.
func parseEntries(b []byte) ([]*entry, bool) {
	n, ok := countEntries(b)
	if !ok {
		return nil, false
	}
	s := string(b) // one copy; every path is a substring of it
	backing := make([]entry, n)
	list := make([]*entry, n)
	off := 0
	for i := range backing {
		l, k := binary.Uvarint(b[off:])
		off += k
		e := &backing[i]
		e.path = s[off : off+int(l)]
		off += int(l)
		f := b[off : off+entryFixed]
		e.mode = binary.LittleEndian.Uint32(f[0:])
		e.size = int64(binary.LittleEndian.Uint64(f[4:]))
		e.mtime = int64(binary.LittleEndian.Uint64(f[12:]))
		e.ctime = int64(binary.LittleEndian.Uint64(f[20:]))
		e.ino = binary.LittleEndian.Uint64(f[28:])
		e.racy = f[36] == 1
		copy(e.id[:], f[37:])
		off += entryFixed
		list[i] = e
	}
	return list, true
}

// countEntries counts the entries in b, checking that each is whole and
// its path no longer than a path can be.
func countEntries(b []byte) (int, bool) {
	n := 0
	for off := 0; off < len(b); n++ {
		l, k := binary.Uvarint(b[off:])
		if k <= 0 || l > 1<<16 || uint64(len(b)-off-k) < l+entryFixed {
			return 0, false
		}
		off += k + int(l) + entryFixed
	}
	return n, true
}

// bytes is what the entry holds toward /src's size: a file's or symlink's
// size, nothing for a directory.
func (e *entry) bytes() uint64 {
	if e.kind() == protocol.ModeDir || e.size <= 0 {
		return 0
	}
	return uint64(e.size)
}

// size sums the sizes of the files and symlinks the manifest keeps.
func (m *manifest) size() uint64 {
	var n uint64
	for _, e := range m.list {
		if !e.dropped {
			n += e.bytes()
		}
	}
	return n
}

// save writes the manifest as generation gen (atomically) and removes every
// other generation but keep.
func (m *manifest) save(gen, keep uint64) error {
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
	recheck := map[string]bool{}
	for _, e := range m.list {
		if e.recheck {
			recheck[parentDir(e.path)] = true
		}
		if e.dropped {
			continue
		}
		buf = binary.AppendUvarint(buf[:0], uint64(len(e.path)))
		buf = append(buf, e.path...)
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
	os.Remove(manifestPath(gen) + ".recheck")
	if len(recheck) > 0 {
		var b strings.Builder
		for d := range recheck {
			b.WriteString(d + "\x00")
		}
		if err := os.WriteFile(manifestPath(gen)+".recheck", []byte(b.String()), 0o600); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, manifestPath(gen)); err != nil {
		return err
	}
	return cleanManifests(gen, keep)
}

// link saves an unchanged manifest as generation gen: the old one's file,
// linked.
func linkManifest(old, gen uint64) error {
	if old == gen {
		return nil
	}
	os.Remove(manifestPath(gen))
	os.Remove(manifestPath(gen) + ".recheck")
	if err := os.Link(manifestPath(old), manifestPath(gen)); err != nil {
		return err
	}
	return cleanManifests(gen, old)
}

func cleanManifests(gen, keep uint64) error {
	names, _ := os.ReadDir(stateDir)
	for _, n := range names {
		base := strings.TrimSuffix(n.Name(), ".recheck")
		if base != path.Base(manifestPath(gen)) && base != path.Base(manifestPath(keep)) && strings.HasPrefix(n.Name(), "m.") {
			os.Remove(stateDir + "/" + n.Name())
		}
	}
	return nil
}
