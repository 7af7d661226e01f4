package snapshot

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/secrets"
)

type planResult struct {
	fetch  []string
	remove []gitcli.Entry
	// size is what each fetched file is expected to weigh, tracked which
	// of them the branch's tree holds.
	size    map[string]int64
	tracked map[string]bool
	// budget is what the call may still store.
	budget int64
	// retried are files withheld before that fit now: fetched first.
	retried  map[string]bool
	withheld []Withheld
	// settled are paths whose withheld mark goes: committed, gone or
	// ignored now.
	settled []string
	// waiting are directories whose .gitignore the rules mirror could not
	// take this call (past its budget): what is under them waits, and
	// rulesLeft asks the next scan for every file and rule again.
	waiting   []string
	rulesLeft bool
	// full: the scan reported every file, so what an earlier scan held
	// back for a rescan was reported again.
	full bool
	// changed are the helper's reports of the new and changed files, by
	// path: their content ids let a moved or copied file be taken from
	// the branch's tree (reuse) instead of fetched; reused are those taken.
	changed map[string]protocol.Change
	reused  []gitcli.Entry
	// asIs, once read, says which of fetch git stores byte for byte.
	asIs *asIs
	// unfiltered are the files stored as written, their filter driver
	// named by the sandbox's attributes alone (filters.go).
	unfiltered []string
}

// withhold leaves p out of the commit.
func (p *planResult) withhold(path string, size int64, limit string, max int64) {
	p.withheld = append(p.withheld, Withheld{Path: path, Size: size, Limit: limit, Max: max, Tracked: p.tracked[path]})
}

// withholdSecret leaves p out of the commit: it holds the value of the
// secret name.
func (p *planResult) withholdSecret(path string, size int64, name string) {
	p.withheld = append(p.withheld, Withheld{Path: path, Size: size, Limit: LimitSecret, Secret: name, Tracked: p.tracked[path]})
}

// withholdName leaves p out of the commit: its path holds the value of the
// secret name, so no commit may carry it and the result shows it masked.
func (p *planResult) withholdName(path string, size int64, name string, sec *secrets.Values) {
	p.withheld = append(p.withheld, Withheld{Path: sec.Redact(path), Size: size, Limit: LimitSecret, Secret: name, InName: true})
}

// record updates the state's list of withheld files. Files past the
// budget are not listed: the next scan reports every file again. Nor are
// paths holding a secret: that path never becomes committable.
func (p *planResult) record(st *State) {
	for _, q := range p.settled {
		delete(st.Withheld, q)
	}
	// A scan of changes only leaves a rescan that an earlier scan asked
	// for (the one of changes made between calls, say) still to do.
	st.Rescan = p.rulesLeft || st.Rescan && !p.full
	for _, w := range p.withheld {
		if w.InName {
			continue
		}
		if w.Limit == LimitCall {
			st.Rescan = true
			continue
		}
		if st.Withheld == nil {
			st.Withheld = map[string]int64{}
		}
		if len(st.Withheld) < maxRemembered {
			st.Withheld[w.Path] = w.Size
			if w.Limit == LimitSecret {
				st.Withheld[w.Path] = heldSecret
			}
		}
	}
	if len(st.Withheld) == 0 {
		st.Withheld = nil
	}
}

// plan decides, from the changes, which files to fetch and which tree
// entries to drop.
func (s *Store) plan(ctx context.Context, st *State, full bool, changes []protocol.Change, waiting []string) (*planResult, error) {
	p := &planResult{size: map[string]int64{}, tracked: map[string]bool{}, retried: map[string]bool{}, budget: s.MaxCall,
		waiting: waiting, rulesLeft: len(waiting) > 0, full: full, changed: map[string]protocol.Change{}}
	if p.budget <= 0 {
		p.budget = 1 << 62 // no bound, with room for overBound's refunds
	}
	valid, paths, seen := p.admit(changes, st)
	retry := s.retryWithheld(p, st, seen)
	paths = append(paths, retry...)
	if len(valid) == 0 && len(retry) == 0 && !full {
		return p, nil
	}
	valid = p.secretNames(valid, s.Secrets)
	if err := s.ensureTip(ctx, st); err != nil {
		return nil, err
	}
	var staged map[string]gitcli.Entry
	var err error
	all := full || len(paths) > 200
	if all {
		staged, err = s.Git.TreeAll(ctx, st.Tip)
	} else {
		staged, err = s.Git.TreeEntries(ctx, st.Tip, paths)
	}
	if err != nil {
		return nil, err
	}
	ask := p.sort(retry, valid, staged)
	// Without the old manifest (a restarted container) deletions show only
	// as indexed paths the scan did not see.
	if full {
		for q, e := range staged {
			if !seen[q] && e.Mode != "160000" && !Under(q, st.Prune) && !Under(q, st.Submodules) {
				p.remove = append(p.remove, gitcli.Entry{Path: q})
			}
		}
	}
	if err := s.fetchUnignored(ctx, p, ask); err != nil {
		return nil, err
	}
	p.oldestFirst()
	p.fetch = s.hostable(p, p.fetch)
	p.bound(s.MaxFile, s.MaxCall)
	if !all {
		staged = nil // only the changed paths: reuse reads the whole tree
	}
	if err := s.reuse(ctx, p, st.Tip, staged); err != nil {
		return nil, err
	}
	return p, nil
}

// admit takes the changes the scan reported that may be committed (a
// valid path, outside the submodules, once each), and notes each one's
// size, and a change of a file withheld before to decide afresh. It
// returns them, their paths, and the paths seen.
func (p *planResult) admit(changes []protocol.Change, st *State) (valid []protocol.Change, paths []string, seen map[string]bool) {
	seen = map[string]bool{}
	valid = changes[:0]
	for _, c := range changes {
		if !ValidPath(c.Path) || Under(c.Path, st.Submodules) || seen[c.Path] {
			continue
		}
		seen[c.Path] = true
		valid = append(valid, c)
		if c.Op == protocol.Changed {
			p.changed[c.Path] = c
		}
		paths = append(paths, c.Path)
		p.size[c.Path] = int64(min(c.Size, 1<<62))
		if _, ok := st.Withheld[c.Path]; ok {
			p.settled = append(p.settled, c.Path) // decided afresh below
		}
	}
	return valid, paths, seen
}

// retryWithheld are the files withheld before, unchanged, that fit now:
// they are asked for again. The others stay withheld without a word
// until they change; on a full scan, one not seen is gone.
func (s *Store) retryWithheld(p *planResult, st *State, seen map[string]bool) []string {
	var retry []string
	for q, size := range st.Withheld {
		switch {
		case seen[q]:
		case p.full:
			p.settled = append(p.settled, q) // a full scan reports every file: this one is gone
		case size == heldSecret:
			// held until it changes: a secret's value does not leave a file by itself
		case s.tooLong(q):
			// held until it changes (or goes): its name does not shrink by itself
		case s.MaxFile <= 0 || size <= s.MaxFile:
			retry = append(retry, q)
			p.retried[q] = true
			p.size[q] = size
			p.settled = append(p.settled, q)
		}
	}
	return retry
}

// sort decides, against the branch's tree (staged), what each retried and
// valid change needs: a fetch, a removal, nothing, or (untracked) the
// ignore rules' word, which it returns the paths of.
func (p *planResult) sort(retry []string, valid []protocol.Change, staged map[string]gitcli.Entry) (ask []string) {
	for _, q := range retry {
		if _, tracked := staged[q]; tracked {
			p.tracked[q] = true
			p.fetch = append(p.fetch, q)
		} else {
			ask = append(ask, q)
		}
	}
	for _, c := range valid {
		e, tracked := staged[c.Path]
		p.tracked[c.Path] = tracked
		switch {
		case c.Op == protocol.Removed:
			if tracked && e.Mode != "160000" {
				p.remove = append(p.remove, gitcli.Entry{Path: c.Path})
			}
		case tracked && e.Mode == "160000":
			// a gitlink is never turned into a file
		case tracked && c.Op == protocol.Changed:
			if e.Mode != gitMode(c.Mode) || e.ID != hex.EncodeToString(c.ID[:]) {
				p.fetch = append(p.fetch, c.Path)
			}
		case !tracked:
			ask = append(ask, c.Path)
		}
	}
	return ask
}

// fetchUnignored fetches the untracked paths of ask that no ignore rule
// covers.
func (s *Store) fetchUnignored(ctx context.Context, p *planResult, ask []string) error {
	if len(ask) == 0 {
		return nil
	}
	ignored, err := s.Git.Ignored(ctx, ensureDir(s.Rules), ask)
	if err != nil {
		return err
	}
	for _, q := range ask {
		if !ignored[q] {
			p.fetch = append(p.fetch, q)
		}
	}
	return nil
}

// oldestFirst orders the fetch so what waited longest goes first, and a
// file held back is not passed over again by newer ones.
func (p *planResult) oldestFirst() {
	slices.SortFunc(p.fetch, func(a, b string) int {
		if p.retried[a] != p.retried[b] {
			if p.retried[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
}

// secretNames withholds the new and changed files whose path holds a
// secret's value: a commit would carry it in a tree. A removal is kept:
// no commit can hold such a path.
func (p *planResult) secretNames(changes []protocol.Change, sec *secrets.Values) []protocol.Change {
	if sec == nil {
		return changes
	}
	return slices.DeleteFunc(changes, func(c protocol.Change) bool {
		name := sec.Holds([]byte(c.Path))
		if name == "" || c.Op == protocol.Removed {
			return false
		}
		p.withholdName(c.Path, int64(min(c.Size, 1<<62)), name, sec)
		return true
	})
}

// maxPath is the longest path the host can store: a file is written under
// Rules, the longest of the host's places for it (the work tree's root is
// shorter), before git hashes it.
func (s *Store) maxPath() int { return pathMax - 1 - len(s.Rules) - 1 }

// tooLong reports whether the host cannot store path p: fetching it would
// fail on every call, and no later change could be committed.
func (s *Store) tooLong(p string) bool {
	if len(p) > s.maxPath() {
		return true
	}
	for _, c := range strings.Split(p, "/") {
		if len(c) > nameMax {
			return true
		}
	}
	return false
}

// hostable withholds, from the files to fetch, those whose path the host
// cannot store, so the rest of the call is committed and the caller is
// told which to rename, delete or ignore.
func (s *Store) hostable(p *planResult, fetch []string) []string {
	keep := fetch[:0]
	for _, q := range fetch {
		if s.tooLong(q) {
			p.withhold(q, p.size[q], LimitPath, int64(s.maxPath()))
			continue
		}
		keep = append(keep, q)
	}
	return keep
}

// bound withholds the files over maxFile, then, in fetch order, those past
// the call's budget of maxCall. A file is charged its size and a tree
// object for each directory above it that no file before it in this call
// charged: every commit writes a new tree for each directory it changes,
// so a file 150 directories deep costs 151 objects, not one.
func (p *planResult) bound(maxFile, maxCall int64) {
	keep := p.fetch[:0]
	charged := map[string]bool{}
	// The names go to the helper in one Select frame: those past what it
	// holds wait for the next call like files past the budget, instead of
	// failing every call.
	names := int64(binary.MaxVarintLen64)
	for _, q := range p.fetch {
		size := p.size[q]
		dirs := newTrees(q, charged)
		c := cost(size) + int64(len(dirs))*MinCost
		switch {
		case maxFile > 0 && size > maxFile:
			p.withhold(q, size, LimitFile, maxFile)
		case underOrRoot(q, p.waiting):
			p.withhold(q, size, LimitCall, maxCall)
		case c > p.budget || names+selectCost(q) > protocol.MaxFrame:
			p.withhold(q, size, LimitCall, maxCall)
		default:
			p.budget -= c
			names += selectCost(q)
			for _, d := range dirs {
				charged[d] = true
			}
			keep = append(keep, q)
		}
	}
	p.fetch = keep
}

// newTrees are the directories above p, the root "" included, that charged
// does not hold yet. A directory charged has all of its parents charged.
func newTrees(p string, charged map[string]bool) []string {
	var out []string
	for d := parent(p); !charged[d]; d = parent(d) {
		out = append(out, d)
		if d == "" {
			break
		}
	}
	return out
}

// selectCost is what path q adds to a Select frame: its length and bytes.
func selectCost(q string) int64 { return int64(binary.MaxVarintLen64 + len(q)) }

// MinCost is what a file costs the call's budget at least: the block a
// loose object takes on the host's disk, so a million empty files weigh
// 4 GiB, as they would there.
const MinCost = 4 << 10

func cost(size int64) int64 { return max(size, MinCost) }
