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
	"encoding/hex"
	"path"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/helper/protocol"
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
}

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
}

// Take runs the scan half of a call: it answers the helper's Dirs, reads its
// Changes, fetches what git would track and commits it with message. st is
// updated in place; the caller saves it when Take succeeds.
func (s *Store) Take(ctx context.Context, c Conversation, st *State, message string) (*Taken, error) {
	p, err := c.R.Expect(protocol.TDirs)
	if err != nil {
		return nil, err
	}
	dirs, err := protocol.DecodeDirs(p)
	if err != nil {
		return nil, err
	}
	t := &Taken{DirsRead: int(min(dirs.Read, 1<<31)), Full: dirs.Full}
	prune, err := s.prune(ctx, st, dirs)
	if err != nil {
		return nil, err
	}
	if err := c.W.Frame(protocol.TPrune, prune.Encode()); err != nil {
		return nil, err
	}
	changes, err := readChanges(c.R)
	if err != nil {
		return nil, err
	}
	plan, err := s.plan(ctx, st, dirs.Full, changes)
	if err != nil {
		return nil, err
	}
	if err := c.W.Frame(protocol.TSelect, (&protocol.Select{Paths: plan.fetch}).Encode()); err != nil {
		return nil, err
	}
	entries, err := s.receive(ctx, c.R, plan)
	if err != nil {
		return nil, err
	}
	if _, err := c.R.Expect(protocol.TEnd); err != nil {
		return nil, err
	}
	if t.Commit, err = s.commit(ctx, st, append(entries, plan.remove...), message); err != nil {
		return nil, err
	}
	return t, nil
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
}

// plan decides, from the changes, which files to fetch and which index
// entries to drop.
func (s *Store) plan(ctx context.Context, st *State, full bool, changes []protocol.Change) (*planResult, error) {
	p := &planResult{}
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
	}
	if len(valid) == 0 && !full {
		return p, nil
	}
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
	for _, c := range valid {
		e, tracked := staged[c.Path]
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
	slices.Sort(p.fetch)
	return p, nil
}

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
