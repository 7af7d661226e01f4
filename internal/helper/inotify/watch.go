//go:build linux

// Package inotify is PID 1's inotify watcher of /src: which directories
// changed since a manifest generation, asked for over a socket by the scan
// that ends each call, so that it need not stat every file.
package inotify

import (
	"errors"
	"io/fs"
	"maps"
	"net"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helper/relpath"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// Watcher is PID 1's record of which directories under /src changed, kept
// with inotify so a scan need not stat every file. Events are read only
// when a scan asks (the kernel queues them meanwhile, in the order they
// happened); a directory made since the last read is watched when its
// creation is read, and marked changed with everything in it, so what was
// written in it before the watch existed is read too. Whatever the watcher
// cannot vouch for (a queue overflow, no watches left, a restart) makes the
// next scan a full one.
//
// Changes are kept per manifest generation: a scan compares with the last
// manifest the host committed, which need not be the last one made.
type Watcher struct {
	mu   sync.Mutex
	fd   int
	root string
	// inRoot: the working directory is root (PID 1's is /src), and paths
	// are given to the kernel relative to it (see path).
	inRoot bool
	wds    map[int32]string // watch -> directory, relative to root
	prune  map[string]bool
	cur    map[string]bool // changed since the last cut
	segs   []segment       // closed records, oldest first
	base   uint64          // segments cover every generation after base
	valid  bool
	reason string
	// sizes holds, for each skipped directory, the size of what is under
	// it: nothing watches them and no scan reads them. A directory is
	// measured when it starts being skipped, then again in the background
	// (measure). pruneSet says a scan has named them.
	sizes    map[string]uint64
	pruneSet bool
	// unsure are directories whose measurement a cut cut short; cuts
	// counts the scans since the background measured last.
	unsure map[string]bool
	cuts   int
	// asked counts the calls' questions (a peek, a cut): the idle stop's
	// sign of use.
	asked atomic.Int64
	// volumes are the sandbox's other volumes (its home, its kept paths)
	// by absolute path, with their sizes as the background last measured
	// them: the disk guard counts them with /src.
	volumes map[string]uint64
}

type segment struct {
	gen   uint64
	dirty map[string]bool
}

// noWatchesLeft is the reason a watcher stops for good.
const noWatchesLeft = "no inotify watches left (fs.inotify.max_user_watches)"

const watchMask = syscall.IN_CREATE | syscall.IN_DELETE | syscall.IN_MODIFY | syscall.IN_ATTRIB |
	syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF | syscall.IN_MOVE_SELF |
	syscall.IN_ONLYDIR | syscall.IN_DONT_FOLLOW | syscall.IN_EXCL_UNLINK

// New watches the tree at root; a watcher that cannot (no inotify, no
// watches left) vouches for nothing, and every scan reads the whole tree.
func New(root string) *Watcher {
	w := &Watcher{root: root, wds: map[int32]string{}, prune: map[string]bool{}, cur: map[string]bool{}, reason: "the sandbox just started", sizes: map[string]uint64{}, unsure: map[string]bool{}}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		w.fd, w.reason = -1, "inotify: "+err.Error()
		return w
	}
	w.fd = fd
	w.inRoot = sameDir(".", root)
	w.addTree("")
	return w
}

// path is the directory rel as the watcher names it to the kernel:
// relative to the working directory when that is root, else absolute.
// inotify_add_watch takes only a path, and where / is FUSE
// (fuse-overlayfs, Docker's storage driver on these machines and a
// rootless engine's) each absolute lookup asks the FUSE daemon about
// "/src" again: about 25-60 us of its CPU, seconds for 100k directories.
func (w *Watcher) path(rel string) string {
	switch {
	case !w.inRoot && rel == "":
		return w.root
	case !w.inRoot:
		return w.root + "/" + rel
	case rel == "":
		return "."
	}
	return rel
}

// sameDir reports whether a and b are the same directory.
func sameDir(a, b string) bool {
	ai, err := os.Stat(a)
	if err != nil {
		return false
	}
	bi, err := os.Stat(b)
	return err == nil && ai.IsDir() && os.SameFile(ai, bi)
}

func (w *Watcher) pruned(rel string) bool { return relpath.Pruned(rel, w.prune) }

// addTree watches rel and every directory below it, marking each changed.
func (w *Watcher) addTree(rel string) {
	if w.fd < 0 || w.pruned(rel) {
		return
	}
	abs := w.path(rel)
	wd, err := syscall.InotifyAddWatch(w.fd, abs, watchMask)
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.ENOMEM) {
			w.valid, w.reason = false, noWatchesLeft
		}
		return // gone, or not a directory any more
	}
	w.wds[int32(wd)] = rel // a moved directory keeps its watch: new path
	w.cur[rel] = true
	entries, err := os.ReadDir(abs)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() && e.Name() != ".git" {
			w.addTree(join(rel, e.Name()))
		}
	}
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// forget drops the paths of watches under rel (a directory moved away;
// its watches follow it and are found again if it reappears here).
func (w *Watcher) forget(rel string) {
	for wd, p := range w.wds {
		if relpath.Under(p, rel) {
			delete(w.wds, wd)
		}
	}
}

// drain reads every queued event.
func (w *Watcher) drain() {
	if w.fd < 0 {
		return
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(w.fd, buf)
		if err != nil || n <= 0 {
			return // EAGAIN: the queue is empty
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			end := off + syscall.SizeofInotifyEvent + int(ev.Len)
			if end > n {
				break
			}
			name := strings.TrimRight(string(buf[off+syscall.SizeofInotifyEvent:end]), "\x00")
			off = end
			w.event(ev.Wd, ev.Mask, name)
		}
	}
}

func (w *Watcher) event(wd int32, mask uint32, name string) {
	if mask&syscall.IN_Q_OVERFLOW != 0 {
		w.valid, w.reason = false, "too many changes at once for inotify's queue"
		return
	}
	dir, ok := w.wds[wd]
	if !ok {
		return
	}
	if mask&syscall.IN_IGNORED != 0 {
		delete(w.wds, wd)
		return
	}
	w.cur[dir] = true
	if mask&syscall.IN_ISDIR == 0 || name == "" || name == ".git" {
		return
	}
	switch {
	case mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0:
		w.addTree(join(dir, name))
	case mask&syscall.IN_MOVED_FROM != 0:
		w.forget(join(dir, name))
	}
}

// cut answers one scan.
func (w *Watcher) cut(c *protocol.WatchCut) *protocol.WatchDirty {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cutLocked(c)
}

// cutLocked is cut with w.mu held.
func (w *Watcher) cutLocked(c *protocol.WatchCut) *protocol.WatchDirty {
	w.drain()
	w.setPrune(c.Prune)
	if c.Reset {
		// Files may have come from outside the kernel that watches: under
		// gVisor, docker cp and a copy container write /src unseen. The
		// full scan that follows reads every directory anyway.
		w.addTree("")
	} else if !w.valid && w.reason != noWatchesLeft {
		// A queue overflow lost the creation of directories, which have no
		// watch then: watch them now, before the full scan that follows
		// reads them, or what is written in them later goes unseen.
		w.addTree("")
	}
	w.cuts++
	if c.Measure {
		w.measureNow(keys(w.sizes))
		// Freed space in the home lifts the guard at once too.
		deadline := time.Now().Add(measureBudget)
		for d := range w.volumes {
			if n, done := diskUsage(d, deadline); done {
				w.volumes[d] = n
			}
		}
	}
	sizes := protocol.WatchDirty{Pruned: w.prunedTotal(), PrunedKnown: w.pruneSet}
	closed := segment{gen: c.New, dirty: w.cur}
	w.cur = map[string]bool{}
	if c.Reset || !w.valid || c.Old < w.base {
		reason := w.reason
		if w.valid && !c.Reset {
			reason = "no record of the changes since that scan"
		}
		if w.fd >= 0 && w.reason != noWatchesLeft {
			w.valid = true
		}
		// The full scan that follows covers everything up to now.
		w.segs, w.base = nil, c.New
		sizes.Reason = reason
		return &sizes
	}
	w.segs = append(w.segs, closed)
	union := map[string]bool{}
	keep := w.segs[:0]
	for _, s := range w.segs {
		if s.gen <= c.Old {
			continue // the host has committed past it
		}
		keep = append(keep, s)
		for d := range s.dirty {
			union[d] = true
		}
	}
	w.segs, w.base = keep, c.Old
	out := &sizes
	out.Valid, out.Dirs = true, make([]string, 0, len(union))
	for d := range union {
		out.Dirs = append(out.Dirs, d)
	}
	return out
}

// peek answers which directories changed since manifest c.Old, cutting
// nothing: what changed since the last cut, and in the records of cuts the
// host has not committed past (a call whose commit failed). Valid false
// with a reason when the watcher cannot tell for now (restarted, or no
// record back to c.Old), and with none when it never can (no inotify, no
// watches left): every scan reads the whole tree then anyway.
func (w *Watcher) peek(c *protocol.WatchCut) *protocol.WatchDirty {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	switch {
	case w.fd < 0 || w.reason == noWatchesLeft:
		return &protocol.WatchDirty{}
	case !w.valid:
		return &protocol.WatchDirty{Reason: w.reason}
	case c.Old < w.base:
		return &protocol.WatchDirty{Reason: "no record of the changes since that scan"}
	}
	dirty := maps.Clone(w.cur)
	for _, s := range w.segs {
		if s.gen > c.Old {
			maps.Copy(dirty, s.dirty)
		}
	}
	return &protocol.WatchDirty{Valid: true, Dirs: keys(dirty)}
}

// setPrune stops watching what scans skip, and watches again (marked
// changed) what they no longer skip.
func (w *Watcher) setPrune(dirs []string) {
	next := map[string]bool{}
	for _, d := range dirs {
		next[d] = true
	}
	if w.pruneSet && maps.Equal(next, w.prune) {
		// The usual cut: nothing to unwatch, and the pass over every
		// watch below costs milliseconds on a large tree.
		return
	}
	var unpruned []string
	for d := range w.prune {
		if !next[d] {
			unpruned = append(unpruned, d)
		}
	}
	w.pruneSet = true
	for d := range w.sizes {
		if !next[d] {
			delete(w.sizes, d)
		}
	}
	// A directory skipped from now on was just read whole by the scan
	// that saw it: measuring it again costs as much once.
	var fresh []string
	for d := range next {
		if _, ok := w.sizes[d]; !ok {
			fresh = append(fresh, d)
		}
	}
	w.measureNow(fresh)
	w.prune = next
	for wd, p := range w.wds {
		if p != "" && w.pruned(p) {
			syscall.InotifyRmWatch(w.fd, uint32(wd))
			delete(w.wds, wd)
		}
	}
	for _, d := range unpruned {
		w.addTree(d)
	}
}

// Asked is how many questions the calls have asked so far.
func (w *Watcher) Asked() int64 { return w.asked.Load() }

// CountVolumes has the disk guard count dirs, the sandbox's other
// volumes, with /src; call it before Measure.
func (w *Watcher) CountVolumes(dirs []string) {
	w.volumes = map[string]uint64{}
	for _, d := range dirs {
		w.volumes[d] = 0
	}
}

// prunedTotal sums the sizes of the skipped directories, counting one
// inside another once, and of the other volumes.
func (w *Watcher) prunedTotal() uint64 {
	var total uint64
	for _, n := range w.volumes {
		total += n
	}
	for d, n := range w.sizes {
		if parent := path.Dir(d); parent == "." || !relpath.Pruned(parent, w.prune) {
			total += n
		}
	}
	return total
}

// measureBudget bounds how long a cut measures (with w.mu held, and the
// scan waiting): what it cannot finish is finished in the background, and
// the cut reports what it counted so far, a lower bound.
const measureBudget = 2 * time.Second

// measureNow measures dirs for a cut, within measureBudget.
func (w *Watcher) measureNow(dirs []string) {
	deadline := time.Now().Add(measureBudget)
	for _, d := range dirs {
		n, done := diskUsage(w.path(d), deadline)
		w.sizes[d] = n
		if !done {
			w.unsure[d] = true
		} else {
			delete(w.unsure, d)
		}
	}
}

// Measure measures the skipped directories again every interval, beside
// the agent's commands, so a call never waits for it: those a cut left
// unfinished, and all of them when the sandbox was used since. The other
// volumes are measured at once, and with the directories after use.
func (w *Watcher) Measure(interval time.Duration) {
	w.measureVolumes()
	for {
		time.Sleep(interval)
		w.mu.Lock()
		dirs := keys(w.unsure)
		used := w.cuts > 0
		if used {
			dirs = keys(w.sizes)
		}
		w.cuts = 0
		w.mu.Unlock()
		if used {
			w.measureVolumes()
		}
		for _, d := range dirs {
			n, _ := diskUsage(w.path(d), time.Time{})
			w.mu.Lock()
			if _, ok := w.sizes[d]; ok {
				w.sizes[d] = n
				delete(w.unsure, d)
			}
			w.mu.Unlock()
		}
	}
}

// measureVolumes measures the other volumes (none is skipped by a scan:
// they are beside /src, not in it).
func (w *Watcher) measureVolumes() {
	w.mu.Lock()
	dirs := keys(w.volumes)
	w.mu.Unlock()
	for _, d := range dirs {
		n, _ := diskUsage(d, time.Time{})
		w.mu.Lock()
		w.volumes[d] = n
		w.mu.Unlock()
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// diskUsage sums the sizes of the files under dir, without following
// symlinks or crossing into another file system; past deadline (unless
// zero) it stops and says it did not finish.
func diskUsage(dir string, deadline time.Time) (total uint64, done bool) {
	var root syscall.Stat_t
	if syscall.Lstat(dir, &root) != nil {
		return 0, true
	}
	seen := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen%256 == 0 && !deadline.IsZero() && time.Now().After(deadline) {
			return errOutOfTime
		}
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil {
			return nil
		}
		if d.IsDir() && st.Dev != root.Dev {
			return filepath.SkipDir
		}
		if !d.IsDir() && st.Size > 0 {
			total += uint64(st.Size)
		}
		return nil
	})
	return total, err == nil
}

var errOutOfTime = errors.New("out of time")

// Serve answers cuts on the watch socket until the process ends.
func (w *Watcher) Serve() {
	if err := os.MkdirAll(path.Dir(protocol.WatchSocket), 0o700); err != nil {
		return
	}
	os.Remove(protocol.WatchSocket)
	l, err := net.Listen("unix", protocol.WatchSocket)
	if err != nil {
		return
	}
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		go w.answer(conn)
	}
}

// A scan and PID 1 talk in four frames on the watch socket: the scan's
// question (TRequest), PID 1's word that it is answering (TPong), the
// answer (TResult) and, after a cut, the scan's word that it has the
// answer (TDone). A cut closes the record of changes under the scan's
// generation, which is right only if that scan reads what the cut names:
// the events of the next call's command, drained by a cut its scan gave
// up on, would be filed under a generation the host then commits past.
// So PID 1 keeps a cut only once the scan says it has it, and otherwise
// (the scan gave up, or died) makes the next scan a full one, still
// holding the record, so that no other cut comes between. A scan may then
// give up at any time without a change going unread: it waits for a cut
// as long as PID 1 is there to answer (a cut of 100k new directories
// under load takes minutes), and only acceptWithin for PID 1 to say so
// (an agent may have stopped it: gVisor's PID 1 takes SIGSTOP).
const (
	acceptWithin = 10 * time.Second // the question taken; a peek answered
	askWithin    = 5 * time.Minute  // a cut answered, once taken
)

// answer answers one question on conn.
func (w *Watcher) answer(conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(acceptWithin))
	r, wr := protocol.NewReader(conn), protocol.NewWriter(conn)
	p, err := r.Expect(protocol.TRequest)
	if err != nil {
		return
	}
	c, err := protocol.DecodeWatchCut(p)
	if err != nil || wr.Frame(protocol.TPong, nil) != nil {
		return
	}
	w.asked.Add(1)
	if c.Peek {
		wr.Frame(protocol.TResult, w.peek(c).Encode())
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.cutLocked(c)
	conn.SetDeadline(time.Now().Add(acceptWithin))
	if wr.Frame(protocol.TResult, d.Encode()) != nil {
		w.invalidateLocked("a scan stopped waiting for PID 1's record of changes")
		return
	}
	if _, err := r.Expect(protocol.TDone); err != nil {
		w.invalidateLocked("a scan stopped waiting for PID 1's record of changes")
	}
}

// invalidateLocked makes the next cut ask for a full scan.
func (w *Watcher) invalidateLocked(reason string) {
	if w.reason != noWatchesLeft {
		w.valid, w.reason = false, reason
	}
}

// Ask asks PID 1 for the directories changed since manifest old;
// Valid is false when the scan must read everything.
func Ask(c *protocol.WatchCut) *protocol.WatchDirty {
	wakeInit()
	conn, err := net.DialTimeout("unix", protocol.WatchSocket, time.Second)
	if err != nil {
		return &protocol.WatchDirty{}
	}
	defer conn.Close()
	return converse(conn, c)
}

// converse is the scan's side of one question on conn (see answer).
func converse(conn net.Conn, c *protocol.WatchCut) *protocol.WatchDirty {
	conn.SetDeadline(time.Now().Add(acceptWithin))
	r, wr := protocol.NewReader(conn), protocol.NewWriter(conn)
	if err := wr.Frame(protocol.TRequest, c.Encode()); err != nil {
		return &protocol.WatchDirty{}
	}
	if _, err := r.Expect(protocol.TPong); err != nil {
		return &protocol.WatchDirty{}
	}
	if !c.Peek {
		conn.SetDeadline(time.Now().Add(askWithin))
	}
	p, err := r.Expect(protocol.TResult)
	if err != nil {
		return &protocol.WatchDirty{}
	}
	d, err := protocol.DecodeWatchDirty(p)
	if err != nil {
		return &protocol.WatchDirty{}
	}
	if !c.Peek && wr.Frame(protocol.TDone, nil) != nil {
		return &protocol.WatchDirty{}
	}
	return d
}

// wakeInit continues PID 1 when it is stopped: under gVisor an agent's
// SIGSTOP stops it (Linux ignores the signal for a namespace's init), and
// with it the record of changes, the services and the disk guard. Any
// process of the sandbox may send SIGCONT to it.
func wakeInit() {
	b, err := os.ReadFile("/proc/1/stat")
	if err != nil {
		return
	}
	if p, ok := procgroup.ParseStat(b); ok && p.Stopped {
		syscall.Kill(1, syscall.SIGCONT)
	}
}
