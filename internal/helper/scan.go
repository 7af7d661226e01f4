//go:build linux

package helper

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/litterbox-dev/litterbox/internal/helper/inotify"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helper/relpath"
)

// scan compares /src with the last manifest and sends what changed: first
// the new directories and rule files, then, once the host has said which
// directories to skip, the changed files, then the files the host asks for.
func (s *session) scan() error {
	req := s.req
	racyFrom := fsNow() - int64(racyMargin)
	pruned := prune(req.Prune)
	// Only the directories PID 1 saw change are read, when it can tell; when
	// none did, the last manifest is not even read.
	wd := inotify.Ask(&protocol.WatchCut{Reset: req.Rescan, Old: req.OldGen, New: req.NewGen, Prune: req.Prune, Measure: req.Measure})
	end := &protocol.End{Pruned: wd.Pruned, PrunedKnown: wd.PrunedKnown}
	changedDirs, watched := wd.Dirs, wd.Valid
	if watched && len(changedDirs) == 0 && unchangedSince(req.OldGen) && !req.Rescan {
		return s.nothingChanged(end)
	}
	old := <-s.old
	if req.Rescan {
		old = nil // report every file again: the host held some back
	}
	full := old == nil
	var d *delta
	var err error
	rechecked := 0
	if watched && !full {
		rechecked = len(old.recheck)
		d, err = walkDirty(old, append(changedDirs, old.recheck...), pruned)
	} else {
		d, err = walkAll(old, pruned)
	}
	if err != nil {
		return err
	}
	cur := d.cur
	for _, part := range d.dirs(full).Split() {
		if err := s.send(protocol.TDirs, part.Encode()); err != nil {
			return err
		}
	}
	p, err := s.expect(protocol.TPrune)
	if err != nil {
		return err
	}
	pr, err := protocol.DecodePrune(p)
	if err != nil {
		return err
	}
	// What the host skips from now on is still in /src: PID 1 measures
	// it from the next scan on, this one counts it.
	skipped := d.skip(pr.Add)
	if err := d.expand(pr.Expand, pruned, end); err != nil {
		return err
	}
	changes, dirty := d.changes(pr.Requery, racyFrom, req.MaxFile)
	if err := s.sendChanges(changes); err != nil {
		return err
	}
	p, err = s.expect(protocol.TSelect)
	if err != nil {
		return err
	}
	sel, err := protocol.DecodeSelect(p)
	if err != nil {
		return err
	}
	for _, p := range sel.Paths {
		if err := s.sendFile(p, cur); err != nil {
			return err
		}
	}
	switch {
	case full || dirty || rechecked > 0 || len(pr.Add) > 0 || len(pr.Expand) > 0 || len(sel.Paths) > 0:
		err = cur.save(req.NewGen, req.OldGen)
	default:
		// Nothing changed, not even a racy mark: the old file will do.
		err = linkManifest(req.OldGen, req.NewGen)
	}
	if err != nil {
		return err
	}
	end.Files, end.Counted = cur.size(), true
	end.Pruned += skipped
	return s.send(protocol.TEnd, end.Encode())
}

// dirs is what the host needs to know before it decides what to skip:
// the new directories, and the rule files that changed or went.
func (d *delta) dirs(full bool) *protocol.Dirs {
	dirs := &protocol.Dirs{Full: full, Read: uint64(d.read)}
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
			if data, ok := readRule(root+"/"+e.path, e); ok {
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

// expand walks the directories the host no longer skips (their rules
// changed) into the scan.
func (d *delta) expand(dirs []string, pruned map[string]bool, end *protocol.End) error {
	for _, dir := range dirs {
		delete(pruned, dir)
		more, err := walk(root, pruned, dir)
		if err != nil {
			return err
		}
		d.cur.put(more, dir)
		d.fresh = append(d.fresh, more...)
		// PID 1 measured dir as skipped; it is counted with the files now.
		for _, e := range more {
			end.Pruned -= min(end.Pruned, e.bytes())
		}
	}
	return nil
}

// delta is what a scan found against the last manifest.
type delta struct {
	// cur is the new manifest: the last one's records for what was not
	// read again, fresh ones for what was.
	cur *manifest
	// fresh are the entries this scan read.
	fresh []*entry
	// before are the last manifest's entries of the directories read
	// again or gone: what fresh is compared with.
	before    []*entry
	beforeIdx map[string]*entry
	hasOld    bool
	read      int // directories read
}

// walkAll reads the whole tree, compared with all of old (when there is
// one).
func walkAll(old *manifest, pruned map[string]bool) (*delta, error) {
	list, err := walk(root, pruned, "")
	if err != nil {
		return nil, err
	}
	d := &delta{cur: newManifest(list, ""), fresh: list, read: 1, hasOld: old != nil}
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

// skip leaves the directories the host skips from now on out of the new
// manifest, and returns the size of what they hold.
func (d *delta) skip(dirs []string) (skipped uint64) {
	if len(dirs) == 0 {
		return 0
	}
	cur := d.cur
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

// changes lists what differs between the manifests (everything, without an
// old one) and marks the entries of cur that are racy, with their content's
// id. dirty says cur differs from old in anything the next scan uses.
// Regular files over maxFile (0: no bound) are reported unhashed when there
// is an old manifest: the host does not commit them, so their content is
// not read. Without one (a first or full scan) they are hashed, so that one
// the branch already holds is not reported as changed.
func (d *delta) changes(requery []string, racyFrom int64, maxFile uint64) (out []protocol.Change, dirty bool) {
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
	ok := hashAll(root, hash)
	gone := map[*entry]bool{}
	for i, e := range hash {
		if !ok[i] {
			gone[e] = true
			d.cur.dropEntry(e, true)
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
func (d *delta) listKept(requery []string) (out []protocol.Change) {
	if len(requery) == 0 {
		return nil
	}
	for _, dir := range d.cur.sorted() {
		r := d.cur.dirs[dir]
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

// walkDirty is walk for a scan that knows which directories changed since
// the old manifest: those are read again (new directories in them whole),
// and every other record of old is kept as it was, unless its directory is
// gone. old becomes the new manifest.
func walkDirty(old *manifest, dirty []string, pruned map[string]bool) (*delta, error) {
	isOldDir := func(p string) bool { return old.dirs[p] != nil }
	slices.Sort(dirty) // parents first
	dirty = slices.Compact(dirty)
	var fresh []*entry
	var roots []string          // directories read again, and new ones walked whole
	again := map[string]bool{}  // directories read again
	listed := map[string]bool{} // directories those reads found
	var whole []string          // new directories walked whole
	read := 0
	var st syscall.Stat_t
	if err := syscall.Stat(root, &st); err != nil {
		return nil, errors.New(root + " is gone")
	}
	w := &walker{root: root, dev: st.Dev, prune: pruned}
	for _, d := range dirty {
		if relpath.UnderAny(d, whole) || relpath.Pruned(d, pruned) {
			continue
		}
		if d != "" && !isOldDir(d) && !listed[d] {
			continue // new: walked whole from its parent, or gone
		}
		entries, subdirs := w.readDir(d)
		if entries == nil && subdirs == nil {
			if fi, err := os.Lstat(root + "/" + d); err != nil || !fi.IsDir() {
				continue // gone: its parent's read says so
			}
		}
		again[d] = true
		roots = append(roots, d)
		fresh = append(fresh, entries...)
		for _, sub := range subdirs {
			listed[sub] = true
			if !isOldDir(sub) {
				more, err := walk(root, pruned, sub)
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
	d := &delta{cur: old, fresh: fresh, hasOld: true, read: read + len(again)}
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

// unchangedSince reports whether manifest gen exists and needs no directory
// read again.
func unchangedSince(gen uint64) bool {
	if _, err := os.Stat(manifestPath(gen)); err != nil {
		return false
	}
	_, err := os.Stat(manifestPath(gen) + ".recheck")
	return err != nil
}

// nothingChanged is a scan when PID 1 saw no change since the last
// manifest: empty answers, and that manifest saved as the new one. The host
// may still ask for files it held back before (over a bound then).
func (s *session) nothingChanged(end *protocol.End) error {
	if err := s.send(protocol.TDirs, (&protocol.Dirs{}).Encode()); err != nil {
		return err
	}
	p, err := s.expect(protocol.TPrune)
	if err != nil {
		return err
	}
	if pr, err := protocol.DecodePrune(p); err != nil || len(pr.Add)+len(pr.Expand)+len(pr.Requery) > 0 {
		return errors.New("the host changed what is skipped with no new directory or rule")
	}
	if err := s.sendChanges(nil); err != nil {
		return err
	}
	if p, err = s.expect(protocol.TSelect); err != nil {
		return err
	}
	sel, err := protocol.DecodeSelect(p)
	if err != nil {
		return err
	}
	cur := &manifest{}
	for _, p := range sel.Paths {
		if err := s.sendFile(p, cur); err != nil {
			return err
		}
	}
	if err := linkManifest(s.req.OldGen, s.req.NewGen); err != nil {
		return err
	}
	return s.send(protocol.TEnd, end.Encode())
}
