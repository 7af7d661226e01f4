//go:build linux

package helper

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helper/relpath"
	"github.com/litterbox-dev/litterbox/internal/helper/watch"
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
	wd := watch.Ask(&protocol.WatchCut{Reset: req.Rescan, Old: req.OldGen, New: req.NewGen, Prune: req.Prune, Measure: req.Measure})
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
	var list []*entry
	var err error
	var read int
	if watched && !full {
		list, read, err = walkDirty(old, append(changedDirs, old.recheck...), pruned)
	} else {
		list, err = walk(root, pruned, "")
		read = 1
		for _, e := range list {
			if e.kind() == protocol.ModeDir {
				read++
			}
		}
	}
	if err != nil {
		return err
	}
	var oldIdx map[string]*entry
	if !full {
		oldIdx = old.index()
	}
	cur := &manifest{list: list}
	dirs := &protocol.Dirs{Full: full, Read: uint64(read)}
	for _, e := range list {
		o := e // an entry kept from the old manifest is its own old entry
		if !e.kept {
			o = oldIdx[e.path]
		}
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
	if !full {
		for _, o := range old.list {
			if isRuleFile(o.path) && o.kind() != protocol.ModeDir && !o.seen {
				dirs.Rules = append(dirs.Rules, protocol.RuleFile{Path: o.path, Deleted: true})
			}
		}
	}
	for _, part := range dirs.Split() {
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
	var skipped uint64
	if len(pr.Add) > 0 {
		for _, e := range cur.list {
			if relpath.UnderAny(e.path, pr.Add) {
				e.dropped = true
				skipped += e.bytes()
			}
		}
	}
	for _, d := range pr.Expand {
		delete(pruned, d)
		more, err := walk(root, pruned, d)
		if err != nil {
			return err
		}
		cur.list = append(cur.list, more...)
		// PID 1 measured d as skipped; it is counted with the files now.
		for _, e := range more {
			end.Pruned -= min(end.Pruned, e.bytes())
		}
	}
	changes, dirty := changes(old, cur, pr.Requery, racyFrom, req.MaxFile)
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
	case full || dirty || len(old.recheck) > 0 || len(pr.Add) > 0 || len(pr.Expand) > 0 || len(sel.Paths) > 0:
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

// changes lists what differs between the manifests (everything, without an
// old one) and marks the entries of cur that are racy, with their content's
// id. dirty says cur differs from old in anything the next scan uses.
// Regular files over maxFile (0: no bound) are reported unhashed when there
// is an old manifest: the host does not commit them, so their content is
// not read. Without one (a first or full scan) they are hashed, so that one
// the branch already holds is not reported as changed.
func changes(old, cur *manifest, requery []string, racyFrom int64, maxFile uint64) (out []protocol.Change, dirty bool) {
	var oldIdx map[string]*entry
	if old != nil {
		oldIdx = old.index()
	}
	// First what needs a content id: changed entries, racy ones to check
	// again, and entries racy now.
	type verdict struct {
		e       *entry
		o       *entry
		changed bool
	}
	var todo []verdict
	var hash []*entry
	for _, e := range cur.list {
		if e.dropped || e.kind() == protocol.ModeDir {
			continue
		}
		if e.kept {
			if relpath.UnderAny(e.path, requery) {
				out = append(out, protocol.Change{Op: protocol.Listed, Mode: e.mode, Size: uint64(e.size), Path: e.path})
			}
			continue
		}
		o := oldIdx[e.path]
		v := verdict{e: e, o: o, changed: o == nil || o.kind() != e.kind() || !e.sameStat(o)}
		if old != nil && maxFile > 0 && e.kind() == protocol.ModeRegular && uint64(e.size) > maxFile {
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
			e.dropped, e.recheck = true, true
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
	if old != nil {
		for _, o := range old.list {
			if o.kind() != protocol.ModeDir && !o.seen {
				out = append(out, protocol.Change{Op: protocol.Removed, Path: o.path})
				dirty = true
			}
		}
	}
	return out, dirty
}

// walkDirty is walk for a scan that knows which directories changed since
// the old manifest: those are read again (new directories in them whole),
// and every other entry of old is kept as it was, unless its directory is
// gone.
func walkDirty(old *manifest, dirty []string, pruned map[string]bool) (list []*entry, read int, err error) {
	oldIdx := old.index()
	isOldDir := func(p string) bool { e := oldIdx[p]; return e != nil && e.kind() == protocol.ModeDir }
	slices.Sort(dirty) // parents first
	dirty = slices.Compact(dirty)
	var fresh []*entry
	again := map[string]bool{}  // directories read again
	listed := map[string]bool{} // directories those reads found
	var whole []string          // new directories walked whole
	var st syscall.Stat_t
	if err := syscall.Stat(root, &st); err != nil {
		return nil, 0, errors.New(root + " is gone")
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
		fresh = append(fresh, entries...)
		for _, sub := range subdirs {
			listed[sub] = true
			if !isOldDir(sub) {
				more, err := walk(root, pruned, sub)
				if err != nil {
					return nil, 0, err
				}
				for _, e := range more {
					if e.kind() == protocol.ModeDir {
						read++
					}
				}
				read++
				fresh = append(fresh, more...)
				whole = append(whole, sub)
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
	list = fresh
	// A directory's entries lie together in the list: its verdict is
	// worked out once, not once per entry.
	lastPar, keep := "\x00", false
	for _, e := range old.list {
		if par := parentDir(e.path); par != lastPar {
			lastPar, keep = par, !again[par] && !relpath.UnderAny(par, whole) && present(par)
		}
		if !keep {
			continue
		}
		e.kept = true
		list = append(list, e)
	}
	return list, read + len(again), nil
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
