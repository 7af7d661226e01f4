//go:build linux

package manifest

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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helper/search"
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
}

func (e *entry) kind() uint32 { return e.mode & protocol.ModeType }

// sameStat reports whether two scans saw the same file.
func (e *entry) sameStat(o *entry) bool {
	return e.mode == o.mode && e.size == o.size && e.mtime == o.mtime && e.ctime == o.ctime && e.ino == o.ino
}

// Manifest is what one scan saw under /src, paths relative to it, as one
// record per directory: its entries. A call reads and compares only the
// records of the directories PID 1 saw change, and writes the others back
// as it read them, so its cost follows the change, not the tree.
type Manifest struct {
	dirs    map[string]*record
	recheck []string // directories the next scan reads, watched or not
	// rechecks collects recheck for the save: the directories of entries
	// dropped with recheck.
	rechecks map[string]bool
}

// record is one directory's entries: as loaded (raw, parsed when first
// asked for) or as a scan found them (fresh).
type record struct {
	dir   string
	raw   []byte
	list  []*entry
	bytes uint64 // the sizes of its files and symlinks, as loaded
	fresh bool   // read by this scan
}

// entries parses the record on first use (the load checked that it
// parses).
func (r *record) entries() []*entry {
	if r.raw != nil {
		r.list, _ = parseEntries(r.raw, r.dir)
		r.raw = nil
	}
	return r.list
}

// size sums what the record holds toward /src's size.
func (r *record) size() uint64 {
	if r.raw != nil {
		return r.bytes
	}
	var n uint64
	for _, e := range r.list {
		if !e.dropped {
			n += e.bytes()
		}
	}
	return n
}

// New groups entries by directory. roots are the directories the
// entries were walked from: each has a record even when empty, as every
// directory among the entries does.
func New(list []*entry, roots ...string) *Manifest {
	m := &Manifest{dirs: map[string]*record{}}
	m.put(list, roots...)
	return m
}

// put adds fresh records for entries walked from roots, replacing any.
func (m *Manifest) put(list []*entry, roots ...string) {
	for _, d := range roots {
		m.dirs[d] = &record{dir: d, fresh: true}
	}
	for _, e := range list {
		// A directory read again keeps the records of its subdirectories
		// that were not.
		if e.kind() == protocol.ModeDir && m.dirs[e.path] == nil {
			m.dirs[e.path] = &record{dir: e.path, fresh: true}
		}
	}
	for _, e := range list {
		d := parentDir(e.path)
		r := m.dirs[d]
		if r == nil || !r.fresh {
			r = &record{dir: d, fresh: true}
			m.dirs[d] = r
		}
		r.list = append(r.list, e)
	}
}

// all lists every entry, parsing every record, directory by directory.
func (m *Manifest) all() []*entry {
	var out []*entry
	for _, d := range m.sorted() {
		out = append(out, m.dirs[d].entries()...)
	}
	return out
}

// Recheck lists the directories the next scan reads again whatever PID 1
// saw.
func (m *Manifest) Recheck() []string { return m.recheck }

// sorted lists the directories that have a record, sorted.
func (m *Manifest) sorted() []string {
	dirs := make([]string, 0, len(m.dirs))
	for d := range m.dirs {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)
	return dirs
}

// Drop leaves p out of the saved manifest and has the next scan read its
// directory again, watched or not.
func (m *Manifest) Drop(p string) {
	r := m.dirs[parentDir(p)]
	if r == nil {
		return
	}
	for _, e := range r.entries() {
		if e.path == p {
			m.dropEntry(e, true)
		}
	}
}

// dropEntry leaves e out of the saved manifest, its directory read again
// by the next scan with recheck.
func (m *Manifest) dropEntry(e *entry, recheck bool) {
	e.dropped = true
	d := parentDir(e.path)
	if r := m.dirs[d]; r != nil {
		r.entries() // written again, without e
	}
	if recheck {
		e.recheck = true
		if m.rechecks == nil {
			m.rechecks = map[string]bool{}
		}
		m.rechecks[d] = true
	}
}

// RacyMargin: timestamps come from the kernel's coarse clock, truncated to
// the file system's granularity; an entry stamped this close to the scan's
// clock reading is checked by content next time.
const RacyMargin = 20 * time.Millisecond

// FSNow is the file systems' clock: the mtime of a file written now, as
// git compares entries with its index file's mtime.
func FSNow() int64 {
	f := StateDir + "/clock"
	if err := os.MkdirAll(StateDir, 0o700); err == nil {
		if err := os.WriteFile(f, []byte{'.'}, 0o600); err == nil {
			var st syscall.Stat_t
			if syscall.Stat(f, &st) == nil {
				return st.Mtim.Sec*1e9 + st.Mtim.Nsec
			}
		}
	}
	return time.Now().UnixNano()
}

// Prune is the set of directories a scan leaves out.
func Prune(dirs []string) map[string]bool {
	m := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		m[d] = true
	}
	return m
}

// Walk lists rel (a directory under root, "" for root itself) and
// everything below it but the pruned directories, without following
// symlinks or crossing into another file system. Directories are read in
// parallel, each entry with one stat relative to its directory.
func Walk(root string, pruned map[string]bool, rel string) ([]*entry, error) {
	w, err := openWalker(root, pruned)
	if err != nil {
		return nil, err
	}
	defer w.close()
	w.walk(rel)
	return w.out, nil
}

// openWalker opens root for a walk. Every directory under it is opened
// relative to root's descriptor, not by its absolute path: where / is
// FUSE (fuse-overlayfs, Docker's storage driver on these machines and a
// rootless engine's), each absolute lookup asks the FUSE daemon about
// "/src" again, about 25-60 us of its CPU, and a walk of 100k
// directories cost it seconds.
func openWalker(root string, pruned map[string]bool) (*walker, error) {
	fd, err := syscall.Open(root, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	return &walker{root: root, rootFd: fd, dev: st.Dev, prune: pruned}, nil
}

func (w *walker) close() { syscall.Close(w.rootFd) }

// walkers is how many directories a walk reads at once.
const walkers = 8

type walker struct {
	root   string
	rootFd int // root, opened: directories are opened relative to it
	dev    uint64
	prune  map[string]bool
	out    []*entry
}

// walk reads rel and every directory under it, walkers at a time. The
// directories waiting to be read are a list, not a goroutine each: a
// directory of 100k subdirectories held 100k goroutines' stacks at once
// (over 80 MB), in a helper that shares the sandbox's memory.
func (w *walker) walk(rel string) {
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		pending = []string{rel}
		busy    int // directories being read
		wg      sync.WaitGroup
	)
	for range walkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			for {
				for len(pending) == 0 && busy > 0 {
					cond.Wait()
				}
				if len(pending) == 0 {
					cond.Broadcast() // nothing left, nothing being read: done
					return
				}
				d := pending[len(pending)-1]
				pending = pending[:len(pending)-1]
				busy++
				mu.Unlock()
				entries, subdirs := w.readDir(d)
				mu.Lock()
				busy--
				w.out = append(w.out, entries...)
				pending = append(pending, subdirs...)
				cond.Broadcast()
			}
		}()
	}
	wg.Wait()
}

func (w *walker) readDir(rel string) (entries []*entry, subdirs []string) {
	abs, name := w.root, "."
	if rel != "" {
		abs, name = abs+"/"+rel, rel
	}
	fd, err := syscall.Openat(w.rootFd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
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
		if err := search.Fstatat(fd, abs, name, &st); err != nil {
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

// blobID is git's id of a blob with the content of the file e of src
// (of its target, for a symlink).
func blobID(src *os.Root, e *entry) ([20]byte, error) {
	var id [20]byte
	if e.kind() == protocol.ModeSymlink {
		target, err := src.Readlink(e.path)
		if err != nil {
			return id, err
		}
		h := sha1.New()
		fmt.Fprintf(h, "blob %d\x00%s", len(target), target)
		copy(id[:], h.Sum(nil))
		return id, nil
	}
	f, err := OpenRegularIn(src, e.path)
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

// hashAll computes the blob ids of entries of the tree at root in
// parallel, reading them through a root of it (as a scan sends files);
// one that cannot be read (gone since the walk) gets ok false.
func hashAll(root string, entries []*entry) (ok []bool) {
	ok = make([]bool, len(entries))
	if len(entries) == 0 {
		return ok
	}
	src, err := os.OpenRoot(root)
	if err != nil {
		return ok
	}
	defer src.Close()
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				id, err := blobID(src, entries[i])
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
// StateDir holds the manifests; a variable, which tests and the in-process
// helper (helper.RunIn) point elsewhere.
var StateDir = "/tmp/.litterbox"

func manifestPath(gen uint64) string { return StateDir + "/m." + strconv.FormatUint(gen, 10) }

const manifestMagic = "LBXM3\n"

// Load reads generation gen, nil when there is none (or it is not
// one this helper wrote). Every call that changes something reads it, so
// only the records' headers are read now, and a record's entries when the
// scan asks for them: a few ms on 38,000 entries for the file's read.
func Load(gen uint64) *Manifest {
	data, err := os.ReadFile(manifestPath(gen))
	if err != nil || !bytes.HasPrefix(data, []byte(manifestMagic)) {
		return nil
	}
	dirs, ok := parseRecords(data[len(manifestMagic):])
	if !ok {
		return nil
	}
	m := &Manifest{dirs: dirs}
	if data, err := os.ReadFile(manifestPath(gen) + ".recheck"); err == nil {
		for _, d := range strings.Split(string(data), "\x00") {
			if d != "" {
				m.recheck = append(m.recheck, d)
			}
		}
	}
	return m
}

// parseRecords reads the records save wrote: each a directory, the size of
// what it holds, and its entries, which are checked here and parsed later.
func parseRecords(b []byte) (map[string]*record, bool) {
	dirs := map[string]*record{}
	for off := 0; off < len(b); {
		var dir string
		var size, n uint64
		var ok bool
		if dir, off, ok = uvarintString(b, off); !ok {
			return nil, false
		}
		if size, off, ok = uvarint(b, off); !ok {
			return nil, false
		}
		if n, off, ok = uvarint(b, off); !ok || uint64(len(b)-off) < n {
			return nil, false
		}
		body := b[off : off+int(n)]
		off += int(n)
		count, ok := countEntries(body)
		// Each entry's path repeats the directory's once parsed: a
		// manifest the agent wrote must not make that gigabytes.
		if !ok || dirs[dir] != nil || uint64(count)*uint64(len(dir)+1) > maxParsedPaths {
			return nil, false
		}
		dirs[dir] = &record{dir: dir, raw: body, bytes: size}
	}
	return dirs, true
}

// maxParsedPaths bounds what one record's directory adds to its entries'
// paths: 100,000 files in a directory of a 600-byte path.
const maxParsedPaths = 64 << 20

func uvarint(b []byte, off int) (uint64, int, bool) {
	v, k := binary.Uvarint(b[off:])
	return v, off + k, k > 0
}

// uvarintString reads a length and that many bytes.
func uvarintString(b []byte, off int) (string, int, bool) {
	l, off, ok := uvarint(b, off)
	if !ok || l > maxPath || uint64(len(b)-off) < l {
		return "", 0, false
	}
	return string(b[off : off+int(l)]), off + int(l), true
}

// maxPath bounds a directory's path and an entry's name in a manifest:
// Linux's PATH_MAX.
const maxPath = 4096

// entryFixed is the size of an entry's fields after its path: mode, size,
// mtime, ctime, inode, racy and the content's id.
const entryFixed = 4 + 8*4 + 1 + 20

// parseEntries reads the entries of directory dir that save wrote; false
// when b is not a whole list of them.
func parseEntries(b []byte, dir string) ([]*entry, bool) {
	n, ok := countEntries(b)
	if !ok {
		return nil, false
	}
	// One string of the paths, each a substring of it: the directory's
	// path is not stored with each name.
	var paths strings.Builder
	for off := 0; off < len(b); {
		l, k := binary.Uvarint(b[off:])
		off += k
		if dir != "" {
			paths.WriteString(dir)
			paths.WriteByte('/')
		}
		paths.Write(b[off : off+int(l)])
		off += int(l) + entryFixed
	}
	s, at := paths.String(), 0
	backing := make([]entry, n)
	list := make([]*entry, n)
	off := 0
	for i := range backing {
		l, k := binary.Uvarint(b[off:])
		off += k
		e := &backing[i]
		pl := int(l)
		if dir != "" {
			pl += len(dir) + 1
		}
		e.path = s[at : at+pl]
		at += pl
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
		if k <= 0 || l > maxPath || uint64(len(b)-off-k) < l+entryFixed {
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

// Size sums the sizes of the files and symlinks the manifest keeps.
func (m *Manifest) Size() uint64 {
	var n uint64
	for _, r := range m.dirs {
		n += r.size()
	}
	return n
}

// Save writes the manifest as generation gen (atomically) and removes every
// other generation but keep. A record the scan did not touch is written as
// it was read.
func (m *Manifest) Save(gen, keep uint64) error {
	if err := os.MkdirAll(StateDir, 0o700); err != nil {
		return err
	}
	tmp := manifestPath(gen) + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 256<<10)
	w.WriteString(manifestMagic)
	var head, body []byte
	for _, d := range m.sorted() {
		r := m.dirs[d]
		raw := r.raw
		if raw == nil {
			body = encodeEntries(body[:0], d, r.list)
			raw = body
		}
		head = binary.AppendUvarint(head[:0], uint64(len(d)))
		head = append(head, d...)
		head = binary.AppendUvarint(head, r.size())
		head = binary.AppendUvarint(head, uint64(len(raw)))
		w.Write(head)
		w.Write(raw)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	os.Remove(manifestPath(gen) + ".recheck")
	if len(m.rechecks) > 0 {
		var b strings.Builder
		for d := range m.rechecks {
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

// encodeEntries appends the entries of directory dir that are not dropped
// to buf, each by its name in dir.
func encodeEntries(buf []byte, dir string, list []*entry) []byte {
	for _, e := range list {
		if e.dropped {
			continue
		}
		name := e.path
		if dir != "" {
			name = name[len(dir)+1:]
		}
		buf = binary.AppendUvarint(buf, uint64(len(name)))
		buf = append(buf, name...)
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
	}
	return buf
}

// Link saves an unchanged manifest as generation gen: the old one's file,
// linked.
func Link(old, gen uint64) error {
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
	names, _ := os.ReadDir(StateDir)
	for _, n := range names {
		base := strings.TrimSuffix(n.Name(), ".recheck")
		if base != path.Base(manifestPath(gen)) && base != path.Base(manifestPath(keep)) && strings.HasPrefix(n.Name(), "m.") {
			os.Remove(StateDir + "/" + n.Name())
		}
	}
	return nil
}

// OpenRegular opens for reading, with open, the file name that was a
// regular file when its directory was read, and refuses it if it is one
// no longer: the sandbox's processes may swap it meanwhile. O_NOFOLLOW
// refuses a link, and O_NONBLOCK keeps a fifo from blocking the open
// until some writer comes.
func OpenRegular(name string, open func(flag int) (*os.File, error)) (*os.File, error) {
	f, err := open(os.O_RDONLY | syscall.O_NOFOLLOW | syscall.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s changed while it was read: it is no longer a regular file", name)
	}
	return f, nil
}

// OpenRegularIn is OpenRegular of the file rel of root: no link at any
// component leads out of it.
func OpenRegularIn(root *os.Root, rel string) (*os.File, error) {
	return OpenRegular(rel, func(flag int) (*os.File, error) { return root.OpenFile(rel, flag, 0) })
}
