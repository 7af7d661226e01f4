//go:build linux

package helper

import (
	"errors"

	"github.com/litterbox-dev/litterbox/internal/helper/inotify"
	"github.com/litterbox-dev/litterbox/internal/helper/manifest"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// scan compares /src with the last manifest and sends what changed: first
// the new directories and rule files, then, once the host has said which
// directories to skip, the changed files, then the files the host asks for.
func (s *session) scan() error {
	req := s.req
	racyFrom := manifest.FSNow() - int64(manifest.RacyMargin)
	pruned := manifest.Prune(req.Prune)
	// Only the directories PID 1 saw change are read, when it can tell; when
	// none did, the last manifest is not even read.
	wd := inotify.Ask(&protocol.WatchCut{Reset: req.Rescan, Old: req.OldGen, New: req.NewGen, Prune: req.Prune, Measure: req.Measure})
	end := &protocol.End{Pruned: wd.Pruned, PrunedKnown: wd.PrunedKnown}
	changedDirs, watched := wd.Dirs, wd.Valid
	if watched && len(changedDirs) == 0 && manifest.UnchangedSince(req.OldGen) && !req.Rescan {
		return s.nothingChanged(end)
	}
	old := <-s.old
	if req.Rescan {
		old = nil // report every file again: the host held some back
	}
	full := old == nil
	var d *manifest.Delta
	var err error
	rechecked := 0
	if watched && !full {
		rechecked = len(old.Recheck())
		d, err = manifest.WalkDirty(root, old, append(changedDirs, old.Recheck()...), pruned)
	} else {
		d, err = manifest.WalkAll(root, old, pruned)
	}
	if err != nil {
		return err
	}
	cur := d.Cur
	for _, part := range d.Dirs(full).Split() {
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
	skipped := d.Skip(pr.Add)
	if err := d.Expand(pr.Expand, pruned, end); err != nil {
		return err
	}
	changes, dirty := d.Changes(pr.Requery, racyFrom, req.MaxFile)
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
	if err := s.sendFiles(sel.Paths, cur); err != nil {
		return err
	}
	switch {
	case full || dirty || rechecked > 0 || len(pr.Add) > 0 || len(pr.Expand) > 0 || len(sel.Paths) > 0:
		err = cur.Save(req.NewGen, req.OldGen)
	default:
		// Nothing changed, not even a racy mark: the old file will do.
		err = manifest.Link(req.OldGen, req.NewGen)
	}
	if err != nil {
		return err
	}
	end.Files, end.Counted = cur.Size(), true
	end.Pruned += skipped
	return s.send(protocol.TEnd, end.Encode())
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
	cur := manifest.New(nil)
	if err := s.sendFiles(sel.Paths, cur); err != nil {
		return err
	}
	if err := manifest.Link(s.req.OldGen, s.req.NewGen); err != nil {
		return err
	}
	return s.send(protocol.TEnd, end.Encode())
}
