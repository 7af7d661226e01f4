// Package snapshot is the host side of the change loop: it takes what a
// sandbox's helper reports after an agent call (package protocol), decides
// with git what of it git would track, fetches those files, stores them as
// `git add` would and commits them on the sandbox's branch with plumbing, so
// the user's index, HEAD and work tree are never touched.
//
// Everything the helper says is untrusted: paths are checked, ids are only
// used to skip a transfer (a blob is stored only after git hashed it here),
// and a lying helper can at worst commit to its own sandbox's branch.
package snapshot

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"path"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/secrets"
)

// State is what the host remembers between snapshots of one sandbox.
type State struct {
	// Gen is the manifest generation in the container that matches Tip.
	Gen uint64 `json:"gen"`
	// Tip is the branch commit the private index holds, TipTree its tree.
	Tip     string `json:"tip"`
	TipTree string `json:"tip_tree"`
	// Prune lists ignored directories (holding no tracked file) the helper
	// does not scan.
	Prune []string `json:"prune,omitempty"`
	// Submodules are the gitlinks of the base commit: never scanned, never
	// committed into.
	Submodules []string `json:"submodules,omitempty"`
	// Withheld are files git would track that are not committed, over
	// max-file-size, by path with their size then (at most maxRemembered);
	// those that fit later are asked for again. A file held for a secret's
	// value has size heldSecret: it is looked at again once it changes.
	Withheld map[string]int64 `json:"withheld,omitempty"`
	// Rescan: files past the last call's budget wait, unrecorded here; the
	// next scan reports every file again.
	Rescan bool `json:"rescan,omitempty"`
	// FilesSize and PrunedSize are what the helper last counted in /src:
	// the files its scans see, and what lies in the directories they skip.
	FilesSize  uint64 `json:"files_size,omitempty"`
	PrunedSize uint64 `json:"pruned_size,omitempty"`
	// PID1Sizes: the sandbox's PID 1 measures skipped directories (an
	// older helper's does not, nor reads a request to measure now).
	PID1Sizes bool `json:"pid1_sizes,omitempty"`
}

// Used is how many bytes /src held at the last count.
func (st *State) Used() uint64 { return st.FilesSize + st.PrunedSize }

// Skipped is everything the helper does not scan.
func (st *State) Skipped() []string { return append(slices.Clone(st.Prune), st.Submodules...) }

// Store is one sandbox's snapshot machinery on the host.
type Store struct {
	Git    *gitcli.Client
	GitDir string // the repository's common git dir
	Ref    string // the sandbox's branch, refs/heads/litterbox/<slug>
	Branch string // its short name, for messages
	// Index is the private index holding Tip. Rules is a directory that
	// mirrors the sandbox's .gitignore and .gitattributes files, the work
	// tree git reads ignore rules and attributes from; fetched files pass
	// through it to be stored with those attributes.
	Index gitcli.Index
	Rules string
	// Tmp holds what arrives that cannot go through Rules (symlinks).
	Tmp string
	// Author of snapshot commits, and Committer, asked only when a commit
	// is made: an empty one is the user's configured identity.
	Author    gitcli.Ident
	Committer func(context.Context) gitcli.Ident
	// MaxFile and MaxCall bound what one snapshot stores: a larger file is
	// withheld, and past MaxCall bytes the rest waits for the next call.
	// Zero is no bound.
	MaxFile, MaxCall int64
	// Secrets are values no commit may hold: a file holding one is
	// withheld.
	Secrets *secrets.Values
}

// Bounds that withhold a file.
const (
	LimitFile = "max-file-size"
	LimitCall = "max-call-size"
	// LimitSecret is no bound: the file holds a secret's value.
	LimitSecret = "secret"
	// LimitPath: the path is longer than the host can store (PATH_MAX,
	// or NAME_MAX for one of its names); Max is the longest it could be.
	LimitPath = "path-length"
)

// heldSecret marks, in State.Withheld, a file held for a secret.
const heldSecret = -1

// Withheld is a file a snapshot did not commit.
type Withheld struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	// Limit is the bound it is over, LimitFile or LimitCall, and Max that
	// bound's value.
	Limit string `json:"limit"`
	Max   int64  `json:"max"`
	// Secret names the secret whose value the file holds (Limit
	// LimitSecret).
	Secret string `json:"secret,omitempty"`
	// Tracked: the branch keeps the file's last committed version.
	Tracked bool `json:"tracked,omitempty"`
	// InName: the secret's value is in the path itself, which Path shows
	// masked; the file is committed only under another name.
	InName bool `json:"in_name,omitempty"`
}

// Conversation is the host's end of one helper call, after the Result.
type Conversation struct {
	R *protocol.Reader
	W *protocol.Writer
}

// Taken is what one snapshot did.
type Taken struct {
	// Commit is the new commit, "" when nothing git would track changed.
	Commit string
	// DirsRead counts the directories the helper read; Full says it had no
	// manifest to compare with (a restarted container).
	DirsRead int
	Full     bool
	// Withheld are the files this snapshot left out: new or changed ones
	// over max-file-size, and any past max-call-size; the first
	// MaxReported, with WithheldMore counting the rest.
	Withheld     []Withheld
	WithheldMore int
}

// MaxReported bounds the withheld files a result lists; maxRemembered those
// the state keeps (a hostile helper can announce any number).
const (
	MaxReported   = 100
	maxRemembered = 1000
)

// Take runs the scan half of a call: it answers the helper's Dirs, reads its
// Changes, fetches what git would track and commits it with message. st is
// updated in place; the caller saves it when Take succeeds.
func (s *Store) Take(ctx context.Context, c Conversation, st *State, message string) (*Taken, error) {
	dirs, err := readDirs(c.R)
	if err != nil {
		return nil, err
	}
	t := &Taken{DirsRead: int(min(dirs.Read, 1<<31)), Full: dirs.Full}
	prune, err := s.prune(ctx, st, dirs)
	if err != nil {
		return nil, err
	}
	if err := c.W.Frame(protocol.TPrune, prune.out.Encode()); err != nil {
		return nil, err
	}
	changes, err := readChanges(c.R)
	if err != nil {
		return nil, err
	}
	plan, err := s.plan(ctx, st, dirs.Full, changes, prune.waiting)
	if err != nil {
		return nil, err
	}
	if err := c.W.Frame(protocol.TSelect, (&protocol.Select{Paths: plan.fetch}).Encode()); err != nil {
		return nil, err
	}
	entries, end, err := s.receive(ctx, c.R, plan)
	if err != nil {
		return nil, err
	}
	if end.Counted {
		st.FilesSize = end.Files
	}
	if end.PrunedKnown {
		st.PrunedSize, st.PID1Sizes = end.Pruned, true
	}
	t.Withheld = plan.withheld[:min(len(plan.withheld), MaxReported)]
	t.WithheldMore = len(plan.withheld) - len(t.Withheld)
	plan.record(st)
	if t.Commit, err = s.commit(ctx, st, append(entries, plan.remove...), message); err != nil {
		return nil, err
	}
	return t, nil
}

// readDirs reads the Dirs of a scan, in as many frames as the helper
// needed for them.
func readDirs(r *protocol.Reader) (*protocol.Dirs, error) {
	var all *protocol.Dirs
	for {
		p, err := r.Expect(protocol.TDirs)
		if err != nil {
			return nil, err
		}
		m, err := protocol.DecodeDirs(p)
		if err != nil {
			return nil, err
		}
		if all == nil {
			all = m
		} else {
			all.Join(m)
		}
		if !all.More {
			return all, nil
		}
	}
}

func readChanges(r *protocol.Reader) ([]protocol.Change, error) {
	var all []protocol.Change
	for {
		p, err := r.Expect(protocol.TChanges)
		if err != nil {
			return nil, err
		}
		m, err := protocol.DecodeChanges(p)
		if err != nil {
			return nil, err
		}
		all = append(all, m.List...)
		if !m.More {
			return all, nil
		}
	}
}

// ValidPath reports whether p is a clean relative path git can store.
func ValidPath(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || path.Clean(p) != p || strings.ContainsRune(p, 0) {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." || c == "." || strings.EqualFold(c, ".git") {
			return false
		}
	}
	return true
}

// Under reports whether p is one of dirs or inside one.
func Under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

type planResult struct {
	fetch  []string
	remove []gitcli.Entry
	// size is what each fetched file is expected to weigh, tracked which
	// of them the index holds.
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
	st.Rescan = p.rulesLeft
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

// plan decides, from the changes, which files to fetch and which index
// entries to drop.
func (s *Store) plan(ctx context.Context, st *State, full bool, changes []protocol.Change, waiting []string) (*planResult, error) {
	p := &planResult{size: map[string]int64{}, tracked: map[string]bool{}, retried: map[string]bool{}, budget: s.MaxCall,
		waiting: waiting, rulesLeft: len(waiting) > 0}
	if p.budget <= 0 {
		p.budget = 1 << 62 // no bound, with room for overBound's refunds
	}
	var paths []string
	seen := map[string]bool{}
	valid := changes[:0]
	for _, c := range changes {
		if !ValidPath(c.Path) || Under(c.Path, st.Submodules) || seen[c.Path] {
			continue
		}
		seen[c.Path] = true
		valid = append(valid, c)
		paths = append(paths, c.Path)
		p.size[c.Path] = int64(min(c.Size, 1<<62))
		if _, ok := st.Withheld[c.Path]; ok {
			p.settled = append(p.settled, c.Path) // decided afresh below
		}
	}
	// Files withheld before that fit now are asked for again; the others
	// stay withheld without a word until they change.
	var retry []string
	for q, size := range st.Withheld {
		switch {
		case seen[q]:
		case full:
			p.settled = append(p.settled, q) // a full scan reports every file: this one is gone
		case size == heldSecret:
			// held until it changes: a secret's value does not leave a file by itself
		case s.tooLong(q):
			// held until it changes (or goes): its name does not shrink by itself
		case s.MaxFile <= 0 || size <= s.MaxFile:
			retry = append(retry, q)
			p.retried[q] = true
			paths = append(paths, q)
			p.size[q] = size
			p.settled = append(p.settled, q)
		}
	}
	if len(valid) == 0 && len(retry) == 0 && !full {
		return p, nil
	}
	valid = p.secretNames(valid, s.Secrets)
	if err := s.ensureIndex(ctx, st); err != nil {
		return nil, err
	}
	var staged map[string]gitcli.Entry
	var err error
	if full || len(paths) > 200 {
		staged, err = s.Git.StagedAll(ctx, s.Index)
	} else {
		staged, err = s.Git.Staged(ctx, s.Index, paths)
	}
	if err != nil {
		return nil, err
	}
	var ask []string
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
	// Without the old manifest (a restarted container) deletions show only
	// as indexed paths the scan did not see.
	if full {
		for q, e := range staged {
			if !seen[q] && e.Mode != "160000" && !Under(q, st.Prune) && !Under(q, st.Submodules) {
				p.remove = append(p.remove, gitcli.Entry{Path: q})
			}
		}
	}
	if len(ask) > 0 {
		ignored, err := s.Git.Ignored(ctx, ensureDir(s.Rules), ask)
		if err != nil {
			return nil, err
		}
		for _, q := range ask {
			if !ignored[q] {
				p.fetch = append(p.fetch, q)
			}
		}
	}
	// What waited longest goes first, so a file held back is not passed
	// over again by newer ones.
	slices.SortFunc(p.fetch, func(a, b string) int {
		if p.retried[a] != p.retried[b] {
			if p.retried[a] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	p.fetch = s.hostable(p, p.fetch)
	p.bound(s.MaxFile, s.MaxCall)
	return p, nil
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

// Host limits on a path: Linux's PATH_MAX (with its NUL) and NAME_MAX.
const (
	pathMax = 4096
	nameMax = 255
)

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

// gitMode is the index mode git gives a file of st_mode m.
func gitMode(m uint32) string {
	switch {
	case m&protocol.ModeType == protocol.ModeSymlink:
		return "120000"
	case m&0o111 != 0:
		return "100755"
	}
	return "100644"
}
