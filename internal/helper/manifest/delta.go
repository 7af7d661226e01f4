//go:build linux

package manifest

import (
	"cmp"
	"errors"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helper/relpath"
	"github.com/litterbox-dev/litterbox/internal/helper/search"
)

// Dirs is what the host needs to know before it decides what to skip:
// the new directories, and the rule files that changed or went.
func (d *Delta) Dirs(full bool) *protocol.Dirs {
	dirs := &protocol.Dirs{Full: full, Read: uint64(d.read)}
	var src *os.Root // opened for the first rule file read
	defer func() {
		if src != nil {
			src.Close()
		}
	}()
	for _, e := range d.fresh {
		o := d.beforeIdx[e.path]
		if o != nil {
			o.seen = o.kind() == e.kind()
		}
		switch {
		case e.kind() == protocol.ModeDir:
			if o == nil || o.kind() != protocol.ModeDir {
				dirs.New = append(dirs.New, e.path)
			}
		case isRuleFile(e.path) && (o == nil || !e.sameStat(o) || o.racy):
			if src == nil {
				var err error
				if src, err = os.OpenRoot(d.root); err != nil {
					continue
				}
			}
			if data, ok := readRule(src, e); ok {
				dirs.Rules = append(dirs.Rules, protocol.RuleFile{Path: e.path, Data: data})
			}
		}
	}
	for _, o := range d.before {
		if isRuleFile(o.path) && o.kind() != protocol.ModeDir && !o.seen {
			dirs.Rules = append(dirs.Rules, protocol.RuleFile{Path: o.path, Deleted: true})
		}
	}
	return dirs
}

// Expand walks the directories the host no longer skips (their rules
// changed) into the scan.
func (d *Delta) Expand(dirs []string, pruned map[string]bool, end *protocol.End) error {
	for _, dir := range dirs {
		delete(pruned, dir)
		more, err := Walk(d.root, pruned, dir)
		if err != nil {
			return err
		}
		d.Cur.put(more, dir)
		d.fresh = append(d.fresh, more...)
		// PID 1 measured dir as skipped; it is counted with the files now.
		for _, e := range more {
			end.Pruned -= min(end.Pruned, e.bytes())
		}
	}
	return nil
}

// Delta is what a scan found against the last manifest.
type Delta struct {
	// root is the tree scanned (/src).
	root string
	// Cur is the new manifest: the last one's records for what was not
	// read again, fresh ones for what was.
	Cur *Manifest
	// fresh are the entries this scan read.
	fresh []*entry
	// before are the last manifest's entries of the directories read
	// again or gone: what fresh is compared with.
	before    []*entry
	beforeIdx map[string]*entry
	hasOld    bool
	read      int // directories read
}

// WalkAll reads the whole tree, compared with all of old (when there is
// one).
func WalkAll(root string, old *Manifest, pruned map[string]bool) (*Delta, error) {
	list, err := Walk(root, pruned, "")
	if err != nil {
		return nil, err
	}
	d := &Delta{root: root, Cur: New(list, ""), fresh: list, read: 1, hasOld: old != nil}
	for _, e := range list {
		if e.kind() == protocol.ModeDir {
			d.read++
		}
	}
	if old != nil {
		d.before = old.all()
		d.beforeIdx = indexEntries(d.before)
	}
	return d, nil
}

func indexEntries(list []*entry) map[string]*entry {
	idx := make(map[string]*entry, len(list))
	for _, e := range list {
		idx[e.path] = e
	}
	return idx
}

// Skip leaves the directories the host skips from now on out of the new
// manifest, and returns the size of what they hold.
func (d *Delta) Skip(dirs []string) (skipped uint64) {
	if len(dirs) == 0 {
		return 0
	}
	cur := d.Cur
	for dir, r := range cur.dirs {
		if relpath.UnderAny(dir, dirs) {
			for _, e := range r.entries() {
				e.dropped = true
				skipped += e.bytes()
			}
			delete(cur.dirs, dir)
		}
	}
	for _, a := range dirs {
		if r := cur.dirs[parentDir(a)]; r != nil {
			for _, e := range r.entries() {
				if e.path == a && !e.dropped {
					skipped += e.bytes()
					cur.dropEntry(e, false)
				}
			}
		}
	}
	return skipped
}

// Changes lists what differs between the manifests (everything, without an
// old one) and marks the entries of cur that are racy, with their content's
// id. dirty says cur differs from old in anything the next scan uses.
// Regular files over maxFile (0: no bound) are reported unhashed when there
// is an old manifest: the host does not commit them, so their content is
// not read. Without one (a first or full scan) they are hashed, so that one
// the branch already holds is not reported as changed.
func (d *Delta) Changes(requery []string, racyFrom int64, maxFile uint64) (out []protocol.Change, dirty bool) {
	out = d.listKept(requery)
	// First what needs a content id: changed entries, racy ones to check
	// again, and entries racy now.
	type verdict struct {
		e       *entry
		o       *entry
		changed bool
	}
	var todo []verdict
	var hash []*entry
	for _, e := range d.fresh {
		if e.kind() == protocol.ModeDir && !e.dropped {
			// A directory made (or become one) is a record the next scan
			// needs, empty or not: PID 1 names only it when a file comes.
			if o := d.beforeIdx[e.path]; o == nil || o.kind() != protocol.ModeDir {
				dirty = true
			}
		}
		if e.dropped || e.kind() == protocol.ModeDir {
			continue
		}
		o := d.beforeIdx[e.path]
		v := verdict{e: e, o: o, changed: o == nil || o.kind() != e.kind() || !e.sameStat(o)}
		if d.hasOld && maxFile > 0 && e.kind() == protocol.ModeRegular && uint64(e.size) > maxFile {
			e.racy = false
			switch {
			case v.changed:
				out = append(out, protocol.Change{Op: protocol.Changed, Mode: e.mode, Size: uint64(e.size), Path: e.path})
				dirty = true
			case relpath.UnderAny(e.path, requery):
				out = append(out, protocol.Change{Op: protocol.Listed, Mode: e.mode, Size: uint64(e.size), Path: e.path})
			}
			continue
		}
		e.racy = e.mtime >= racyFrom || e.ctime >= racyFrom
		if v.changed || o.racy || e.racy {
			hash = append(hash, e)
		}
		if v.changed || o.racy || e.racy || len(requery) > 0 {
			todo = append(todo, v)
		}
	}
	ok := hashAll(d.root, hash)
	gone := map[*entry]bool{}
	for i, e := range hash {
		if !ok[i] {
			gone[e] = true
			d.Cur.dropEntry(e, true)
			dirty = true
		}
	}
	for _, v := range todo {
		e, o := v.e, v.o
		if gone[e] {
			continue
		}
		if !v.changed && o.racy {
			v.changed = e.id != o.id
		}
		if v.changed || e.racy != (o != nil && o.racy) {
			dirty = true
		}
		switch {
		case v.changed:
			out = append(out, protocol.Change{Op: protocol.Changed, Mode: e.mode, Size: uint64(e.size), ID: e.id, Path: e.path})
		case relpath.UnderAny(e.path, requery):
			out = append(out, protocol.Change{Op: protocol.Listed, Mode: e.mode, Size: uint64(e.size), Path: e.path})
		}
	}
	for _, o := range d.before {
		switch {
		case o.seen:
		case o.kind() == protocol.ModeDir:
			dirty = true // its record goes
		default:
			out = append(out, protocol.Change{Op: protocol.Removed, Path: o.path})
			dirty = true
		}
	}
	return out, dirty
}

// listKept lists the files under requery that the scan did not read, as
// the host asks again about what it held back.
func (d *Delta) listKept(requery []string) (out []protocol.Change) {
	if len(requery) == 0 {
		return nil
	}
	for _, dir := range d.Cur.sorted() {
		r := d.Cur.dirs[dir]
		if r.fresh {
			continue
		}
		for _, e := range r.entries() {
			if !e.dropped && e.kind() != protocol.ModeDir && relpath.UnderAny(e.path, requery) {
				out = append(out, protocol.Change{Op: protocol.Listed, Mode: e.mode, Size: uint64(e.size), Path: e.path})
			}
		}
	}
	return out
}

// WalkDirty is walk for a scan that knows which directories changed since
// the old manifest: those are read again (new directories in them whole),
// and every other record of old is kept as it was, unless its directory is
// gone. old becomes the new manifest.
func WalkDirty(root string, old *Manifest, dirty []string, pruned map[string]bool) (*Delta, error) {
	isOldDir := func(p string) bool { return old.dirs[p] != nil }
	slices.Sort(dirty) // parents first
	dirty = slices.Compact(dirty)
	var fresh []*entry
	var roots []string          // directories read again, and new ones walked whole
	again := map[string]bool{}  // directories read again
	listed := map[string]bool{} // directories those reads found
	var whole []string          // new directories walked whole
	read := 0
	w, err := openWalker(root, pruned)
	if err != nil {
		return nil, errors.New(root + " is gone")
	}
	defer w.close()
	for _, d := range dirty {
		if relpath.UnderAny(d, whole) || relpath.Pruned(d, pruned) {
			continue
		}
		if d != "" && !isOldDir(d) && !listed[d] {
			continue // new: walked whole from its parent, or gone
		}
		entries, subdirs := w.readDir(d)
		if entries == nil && subdirs == nil {
			var st syscall.Stat_t
			if err := search.Fstatat(w.rootFd, root, cmp.Or(d, "."), &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
				continue // gone: its parent's read says so
			}
		}
		again[d] = true
		roots = append(roots, d)
		fresh = append(fresh, entries...)
		for _, sub := range subdirs {
			listed[sub] = true
			if !isOldDir(sub) {
				more, err := Walk(root, pruned, sub)
				if err != nil {
					return nil, err
				}
				for _, e := range more {
					if e.kind() == protocol.ModeDir {
						read++
					}
				}
				read++
				fresh = append(fresh, more...)
				whole = append(whole, sub)
				roots = append(roots, sub)
			}
		}
	}
	// present reports whether directory p still exists, as far as the reads
	// and the old manifest tell.
	memo := map[string]bool{}
	var present func(p string) bool
	present = func(p string) bool {
		if p == "" {
			return true
		}
		if v, ok := memo[p]; ok {
			return v
		}
		par := parentDir(p)
		v := false
		switch {
		case again[par]:
			v = listed[p]
		default:
			v = isOldDir(p) && present(par)
		}
		memo[p] = v
		return v
	}
	// The records read again or gone leave the manifest; their entries are
	// what the fresh ones are compared with.
	var out []string
	for dir := range old.dirs {
		if again[dir] || relpath.UnderAny(dir, whole) || !present(dir) {
			out = append(out, dir)
		}
	}
	slices.Sort(out)
	d := &Delta{root: root, Cur: old, fresh: fresh, hasOld: true, read: read + len(again)}
	for _, dir := range out {
		d.before = append(d.before, old.dirs[dir].entries()...)
		delete(old.dirs, dir)
	}
	d.beforeIdx = indexEntries(d.before)
	old.put(fresh, roots...)
	return d, nil
}

func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

// UnchangedSince reports whether manifest gen exists and needs no directory
// read again.
func UnchangedSince(gen uint64) bool {
	if _, err := os.Stat(manifestPath(gen)); err != nil {
		return false
	}
	_, err := os.Stat(manifestPath(gen) + ".recheck")
	return err != nil
}

// isRuleFile reports whether p is a file of git's ignore or attribute rules.
func isRuleFile(p string) bool {
	b := path.Base(p)
	return b == ".gitignore" || b == ".gitattributes"
}

// readRule reads the rule file e of src, as a scan reads what it sends:
// through the root, and only while it is a regular file (a fifo swapped
// in is not waited for).
func readRule(src *os.Root, e *entry) ([]byte, bool) {
	if e.kind() != protocol.ModeRegular {
		return nil, false
	}
	if e.size > protocol.MaxRuleFile {
		return []byte{}, true
	}
	f, err := OpenRegularIn(src, e.path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, protocol.MaxRuleFile+1))
	if err != nil || len(data) > protocol.MaxRuleFile {
		return nil, false
	}
	return data, true
}
