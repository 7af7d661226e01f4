//go:build linux

package helper

import (
	"github.com/litterbox-dev/litterbox/helper/protocol"
)

// scan compares /src with the last manifest and sends what changed: first
// the new directories and rule files, then, once the host has said which
// directories to skip, the changed files, then the files the host asks for.
func (s *session) scan() error {
	req := s.req
	racyFrom := fsNow() - int64(racyMargin)
	pruned := prune(req.Prune)
	list, err := walk(Root, pruned, "")
	if err != nil {
		return err
	}
	old := <-s.old
	full := old == nil
	var oldIdx map[string]*entry
	if !full {
		oldIdx = old.index()
	}
	cur := &manifest{list: list}
	dirs := &protocol.Dirs{Full: full}
	for _, e := range list {
		o := oldIdx[e.path]
		if o != nil {
			o.seen = o.kind() == e.kind()
		}
		switch {
		case e.kind() == protocol.ModeDir:
			if o == nil || o.kind() != protocol.ModeDir {
				dirs.New = append(dirs.New, e.path)
			}
		case isRuleFile(e.path) && (o == nil || !e.sameStat(o) || o.racy):
			if data, ok := readRule(Root+"/"+e.path, e); ok {
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
	if err := s.send(protocol.TDirs, dirs.Encode()); err != nil {
		return err
	}
	p, err := s.expect(protocol.TPrune)
	if err != nil {
		return err
	}
	pr, err := protocol.DecodePrune(p)
	if err != nil {
		return err
	}
	if len(pr.Add) > 0 {
		for _, e := range cur.list {
			if underAny(e.path, pr.Add) {
				e.dropped = true
			}
		}
	}
	for _, d := range pr.Expand {
		delete(pruned, d)
		more, err := walk(Root, pruned, d)
		if err != nil {
			return err
		}
		cur.list = append(cur.list, more...)
	}
	changes, dirty := changes(old, cur, pr.Requery, racyFrom)
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
	case dirty || full || len(pr.Add) > 0 || len(pr.Expand) > 0 || len(sel.Paths) > 0:
		err = cur.save(req.NewGen, req.OldGen)
	default:
		// Nothing changed, not even a racy mark: the old file will do.
		err = linkManifest(req.OldGen, req.NewGen)
	}
	if err != nil {
		return err
	}
	return s.send(protocol.TEnd, nil)
}

// changes lists what differs between the manifests (everything, without an
// old one) and marks the entries of cur that are racy, with their content's
// id. dirty says cur differs from old in anything the next scan uses.
func changes(old, cur *manifest, requery []string, racyFrom int64) (out []protocol.Change, dirty bool) {
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
		o := oldIdx[e.path]
		v := verdict{e: e, o: o, changed: o == nil || o.kind() != e.kind() || !e.sameStat(o)}
		e.racy = e.mtime >= racyFrom || e.ctime >= racyFrom
		if v.changed || o.racy || e.racy {
			hash = append(hash, e)
		}
		if v.changed || o.racy || e.racy || len(requery) > 0 {
			todo = append(todo, v)
		}
	}
	ok := hashAll(Root, hash)
	gone := map[*entry]bool{}
	for i, e := range hash {
		if !ok[i] {
			gone[e] = true
			e.dropped = true
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
		case underAny(e.path, requery):
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
