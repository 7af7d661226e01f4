package sandbox

import (
	"context"
	"fmt"
	"os"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/replay"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/review"
)

// Synced is what a sync did.
type Synced struct {
	Name string `json:"name"`
	// Onto is the commit the sandbox now starts from, OntoName what named
	// it ("main").
	Onto     string `json:"onto"`
	OntoName string `json:"onto_name"`
	// From and To are the branch's tips before and after; From stays in
	// refs/litterbox/NAME/presync until the next sync.
	From string `json:"from"`
	To   string `json:"to"`
	// Replayed and Dropped count the sandbox's commits written again and
	// those whose change Onto held already.
	Replayed int `json:"replayed"`
	Dropped  int `json:"dropped"`
	// Conflicts are the files the last commit holds with conflict markers,
	// in /src too.
	Conflicts []string `json:"conflicts,omitempty"`
	// UpToDate: the sandbox started from Onto already; nothing changed.
	UpToDate bool `json:"up_to_date,omitempty"`
	// Refused: the sync would conflict and SyncOptions.NoConflicts was
	// given, so nothing changed; Conflicts names the files.
	Refused bool `json:"refused,omitempty"`
	// Note is the helper's failure to bring /src all the way; the call's
	// snapshot committed what /src holds instead.
	Note string `json:"note,omitempty"`
}

// presyncRef keeps the tip a sync moved the branch from, so the commits
// before it stay reachable.
func presyncRef(slug string) string { return "refs/litterbox/" + slug + "/presync" }

// syncTries bounds the syncs computed again because /src changed between
// the commit of what it held and the sync's own call.
const syncTries = 3

// SyncOptions are what a sync is asked.
type SyncOptions struct {
	// Onto is a ref or commit of the user's; "" is HEAD.
	Onto string
	// NoConflicts: a sync that would conflict changes nothing (Refused).
	NoConflicts bool
	// Tip, when set, is the tip a person reviewed: a branch that moved
	// past it (a call, or what /src held uncommitted) is not synced.
	Tip string
}

// Sync moves sandbox name onto o.Onto. Its commits are replayed there as
// git objects (package replay): git merge-tree reads the attributes of the
// user's work tree, never the branch's, so the branch picks no merge
// driver of theirs, and Sealed git runs no hook and fetches nothing. Then
// /src is brought to the new tree in place through the helper, ignored
// files, the home and running processes kept, and the branch moved. A
// conflict leaves its files with their markers in /src and in a commit of
// their own. The host's work tree, index and HEAD are never touched.
func (m *Manager) Sync(ctx context.Context, name string, o SyncOptions) (*Synced, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, err
	}
	unlock, err := m.Repo.Lock(layout.WithCall(ctx, "sync"), slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	target, targetName, err := m.syncTarget(ctx, o.Onto)
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		if err := m.commitFirst(ctx, slug, false); err != nil {
			return nil, err
		}
		s, skipped, err := m.syncOnce(ctx, slug, target, targetName, o)
		if err != nil || !skipped {
			return s, err
		}
		if try == syncTries {
			return nil, fmt.Errorf("not synced: /src of sandbox '%s' kept changing while the sync was made (%d tries); stop what writes to it and sync again", slug, syncTries)
		}
	}
}

// syncTarget resolves onto to a commit and a name for messages.
func (m *Manager) syncTarget(ctx context.Context, onto string) (string, string, error) {
	rev := onto
	if rev == "" {
		rev = "HEAD"
	}
	id, err := m.Repo.Git.RevParse(ctx, rev+"^{commit}")
	if err != nil {
		return "", "", err
	}
	if id == "" {
		return "", "", fmt.Errorf("not synced: %q names no commit here (give a branch, a tag or a commit of yours with --onto)", rev)
	}
	if onto != "" {
		return id, onto, nil
	}
	name, err := m.Repo.Git.Output(ctx, "rev-parse", "--abbrev-ref", "HEAD")
	if err != nil || name == "HEAD" {
		name = hostrepo.ShortID(id)
	}
	return id, name, nil
}

// syncOnce makes one sync with the lock held and /src committed; skipped
// says /src changed before the helper applied it, so nothing was done.
func (m *Manager) syncOnce(ctx context.Context, slug, onto, ontoName string, o SyncOptions) (*Synced, bool, error) {
	w, err := m.work(ctx, slug)
	if err != nil {
		return nil, false, err
	}
	if o.Tip != "" && w.Tip != o.Tip {
		return nil, false, fmt.Errorf("not synced: litterbox/%s moved from %s to %s since it was reviewed; review it again", slug, hostrepo.ShortID(o.Tip), hostrepo.ShortID(w.Tip))
	}
	s := &Synced{Name: slug, Onto: onto, OntoName: ontoName, From: w.Tip, To: w.Tip}
	if w.Base == onto {
		s.UpToDate = true
		return s, false, nil
	}
	r, err := replay.Replay(ctx, review.Sealed(m.Repo.Git), replay.Spec{
		Base: w.Base, Tip: w.Tip, Onto: onto, OntoName: ontoName, TipName: m.Repo.Names(slug).Branch,
		Author: m.Repo.AgentIdent(slug), Committer: m.Repo.Committer(ctx, slug),
	})
	if err != nil {
		return nil, false, fmt.Errorf("not synced: replaying the commits of litterbox/%s: %w", slug, err)
	}
	s.To, s.Replayed, s.Dropped, s.Conflicts = r.Tip, r.Replayed, r.Dropped, r.Conflicts
	if o.NoConflicts && len(r.Conflicts) > 0 {
		s.To, s.Refused = w.Tip, true
		return s, false, nil
	}
	if err := m.holdForSync(ctx, slug, w.Tip); err != nil {
		return nil, false, err
	}
	res, err := m.bringSrc(ctx, slug, w.Tip, r.Tip)
	if err != nil {
		return nil, false, err
	}
	if res.OpErr == protocol.SyncSkipped {
		return nil, true, nil
	}
	s.Note = res.OpErr
	return s, false, m.settleSync(ctx, slug, onto)
}

// holdForSync keeps the old tip in the presync ref, so its commits stay
// reachable whatever the sync does (agent.Swap marks the state for a sync
// that stops half-way).
func (m *Manager) holdForSync(ctx context.Context, slug, tip string) error {
	_, err := m.Repo.Git.Output(ctx, "update-ref", "-m", "litterbox sync: the tip before", presyncRef(slug), tip)
	return err
}

// bringSrc sends the change from the tree of from to that of to into
// /src in one call, which moves the branch to to before its scan.
func (m *Manager) bringSrc(ctx context.Context, slug, from, to string) (*result.Act, error) {
	dir := m.Repo.Layout().TmpOf(slug)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, "sync-*.tar")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	paths, err := replay.Delta(ctx, review.Sealed(m.Repo.Git), from, to, f)
	if err != nil {
		return nil, err
	}
	size, err := f.Seek(0, 1)
	if err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	return m.Agent.ActLocked(ctx, slug, agent.Action{
		Op: protocol.OpSync, Content: f, Size: size, Swap: &agent.Swap{From: from, To: to},
		Message: hostrepo.CommitMessage("sync", fmt.Sprintf("what /src holds otherwise after the sync of %d paths", len(paths))),
	})
}

// settleSync records the sandbox's new base; an earlier apply's mark goes,
// its commits being in the base now or replayed after it.
func (m *Manager) settleSync(ctx context.Context, slug, onto string) error {
	rec, err := m.Repo.Store().Load(slug)
	if err != nil {
		return err
	}
	if rec != nil {
		rec.Base = onto
		if err := m.Repo.Store().Save(rec); err != nil {
			return err
		}
	}
	ref := appliedRef(slug)
	if id, _ := m.Repo.Git.RevParse(ctx, ref); id != "" {
		return m.Repo.Git.DeleteRef(ctx, ref, id)
	}
	return nil
}
