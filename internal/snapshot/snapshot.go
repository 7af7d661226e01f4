// Package snapshot is the host side of the change loop: it takes what a
// sandbox's helper reports after an agent call (package protocol), decides
// with git what of it git would track, fetches those files, stores them as
// `git add` would and commits them on the sandbox's branch with plumbing, so
// the user's index, HEAD and work tree are never touched.
//
// Everything the helper says is untrusted: paths are checked, ids are only
// used to skip a transfer (a blob is stored only as hashed here, by git or
// for fast-import as git does, or taken from the sandbox's own tree:
// reuse), and a lying helper can at worst commit to its own sandbox's
// branch.
package snapshot

import (
	"context"
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
	// Tip is the branch commit the last snapshot made or read, TipTree its
	// tree: the next one compares with it and commits on it.
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
	// Rules is a directory that mirrors the sandbox's .gitignore and
	// .gitattributes files, the work tree git reads ignore rules and
	// attributes from; fetched files pass through it to be stored with
	// those attributes.
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
	// Unfiltered are the files committed as written, without the filter
	// the sandbox's .gitattributes named for them (filters.go); the first
	// MaxReported.
	Unfiltered []string
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
	return s.TakeCounted(ctx, c, st, func([]string) string { return message })
}

// TakeCounted is Take with the message made from the paths the commit
// changes (sorted).
func (s *Store) TakeCounted(ctx context.Context, c Conversation, st *State, message func(paths []string) string) (*Taken, error) {
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
	t.Unfiltered = plan.unfiltered[:min(len(plan.unfiltered), MaxReported)]
	plan.record(st)
	changed := slices.Concat(entries, plan.reused, plan.remove)
	if t.Commit, err = s.commit(ctx, st, changed, message(pathsOf(changed))); err != nil {
		return nil, err
	}
	return t, nil
}

// pathsOf are the entries' paths, sorted.
func pathsOf(entries []gitcli.Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.Path
	}
	slices.Sort(out)
	return out
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
		if c == ".." || c == "." || isDotGit(c) {
			return false
		}
	}
	return true
}

// isDotGit reports whether a path component names .git on some file
// system a clone of the branch may land on, as git's verify_path refuses it
// (core.protectNTFS and core.protectHFS, on by default): any case, with
// trailing dots or spaces, with characters HFS+ ignores, the short name
// GIT~1, or an NTFS stream (.git::$INDEX_ALLOCATION). Commits are made
// with fast-import, which does not check; update-index did.
func isDotGit(c string) bool {
	c = strings.Map(func(r rune) rune {
		if hfsIgnored(r) {
			return -1
		}
		return r
	}, c)
	if i := strings.IndexByte(c, ':'); i >= 0 {
		c = c[:i]
	}
	c = strings.TrimRight(c, ". ")
	return strings.EqualFold(c, ".git") || strings.EqualFold(c, "git~1")
}

// hfsIgnored are the code points HFS+ drops from a name (git's
// is_hfs_dotgit list).
func hfsIgnored(r rune) bool {
	return r >= 0x200c && r <= 0x200f || r >= 0x202a && r <= 0x202e || r >= 0x206a && r <= 0x206f || r == 0xfeff
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

// Host limits on a path: Linux's PATH_MAX (with its NUL) and NAME_MAX.
const (
	pathMax = 4096
	nameMax = 255
)

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
