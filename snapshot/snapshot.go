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
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
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
	return s.take(ctx, c, st, message)
}

func (s *Store) take(ctx context.Context, c Conversation, st *State, message string) (*Taken, error) {
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

// prune updates the rules mirror from the helper's Dirs and decides which
// directories the helper skips from now on, enters again, or lists whole
// because their ignore rules changed.
func (s *Store) prune(ctx context.Context, st *State, d *protocol.Dirs) (*protocol.Prune, error) {
	out := &protocol.Prune{}
	var changedAt []string // directories whose .gitignore changed
	for _, r := range d.Rules {
		if !ValidPath(r.Path) || !isRuleFile(r.Path) || len(r.Data) > protocol.MaxRuleFile {
			continue
		}
		dst := filepath.Join(s.Rules, filepath.FromSlash(r.Path))
		if r.Deleted {
			if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		} else if err := writeUnder(s.Rules, r.Path, r.Data); err != nil {
			return nil, err
		}
		if path.Base(r.Path) == ".gitignore" {
			changedAt = append(changedAt, parent(r.Path))
		}
	}
	newDirs := make([]string, 0, len(d.New))
	for _, p := range d.New {
		if ValidPath(p) && !Under(p, st.Submodules) && !Under(p, st.Prune) {
			newDirs = append(newDirs, p)
		}
	}
	// A rule change inside a new directory concerns only new files, which
	// are all reported anyway.
	for _, dir := range changedAt {
		if dir != "" && (slices.Contains(newDirs, dir) || Under(dir, newDirs)) {
			continue
		}
		out.Requery = appendTop(out.Requery, dir)
	}
	// Skipped directories whose rules changed are asked about again.
	var recheck []string
	if len(out.Requery) > 0 {
		for _, p := range st.Prune {
			if underOrRoot(p, out.Requery) {
				recheck = append(recheck, p)
			}
		}
	}
	ask := append(slices.Clone(newDirs), recheck...)
	if len(ask) == 0 {
		return out, nil
	}
	q := make([]string, len(ask))
	for i, p := range ask {
		q[i] = p + "/"
	}
	ignored, err := s.Git.Ignored(ctx, ensureDir(s.Rules), q)
	if err != nil {
		return nil, err
	}
	var keep []string
	for _, p := range st.Prune {
		if slices.Contains(recheck, p) && !ignored[p+"/"] {
			out.Expand = append(out.Expand, p)
			continue
		}
		keep = append(keep, p)
	}
	// New directories to skip: ignored ones, and those whose own .gitignore
	// ignores everything in them (pytest, mypy and ruff caches, venvs),
	// unless they hold a tracked file.
	var cands []string
	slices.Sort(newDirs)
	for _, p := range newDirs {
		if Under(p, cands) || Under(p, keep) {
			continue
		}
		if ignored[p+"/"] || s.ignoresAll(p) {
			cands = append(cands, p)
		}
	}
	if len(cands) > 0 {
		if err := s.ensureIndex(ctx, st); err != nil {
			return nil, err
		}
		tracked, err := s.Git.Staged(ctx, s.Index, cands)
		if err != nil {
			return nil, err
		}
		for _, p := range cands {
			holds := false
			for t := range tracked {
				if strings.HasPrefix(t, p+"/") {
					holds = true
					break
				}
			}
			if !holds {
				out.Add = append(out.Add, p)
				keep = append(keep, p)
			}
		}
	}
	slices.Sort(keep)
	st.Prune = keep
	return out, nil
}

// ignoresAll reports whether dir's own .gitignore ignores everything below
// it: rules of a deeper .gitignore override those above, and with every
// name ignored git never looks deeper.
func (s *Store) ignoresAll(dir string) bool {
	data, err := os.ReadFile(filepath.Join(s.Rules, filepath.FromSlash(dir), ".gitignore"))
	if err != nil {
		return false
	}
	all := false
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "*" || line == "/*" || line == "**":
			all = true
		default:
			return false // anything else may re-include or narrow
		}
	}
	return all
}

func isRuleFile(p string) bool {
	b := path.Base(p)
	return b == ".gitignore" || b == ".gitattributes"
}

func parent(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// appendTop adds dir unless it is under one already there; "" is the root.
func appendTop(dirs []string, dir string) []string {
	if dir == "" {
		return []string{""}
	}
	if slices.Contains(dirs, "") || Under(dir, dirs) {
		return dirs
	}
	return append(slices.DeleteFunc(dirs, func(d string) bool { return Under(d, []string{dir}) }), dir)
}

func underOrRoot(p string, dirs []string) bool {
	return slices.Contains(dirs, "") || Under(p, dirs)
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

// receive reads the files the plan fetches, in order, stores them as blobs
// and returns their index entries. A file that vanished meanwhile is
// dropped from the index when it was tracked.
func (s *Store) receive(ctx context.Context, r *protocol.Reader, plan *planResult) ([]gitcli.Entry, error) {
	if len(plan.fetch) == 0 {
		return nil, nil
	}
	if err := os.RemoveAll(s.Tmp); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Tmp, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(s.Tmp)
	var regular, links, odd []gitcli.Entry // odd: names hash-object cannot read by line
	var written []string
	defer func() {
		for _, p := range written {
			if !isRuleFile(p) {
				os.Remove(filepath.Join(s.Rules, filepath.FromSlash(p)))
			}
		}
	}()
	var oddFiles, linkFiles []string
	for i, want := range plan.fetch {
		p, err := r.Expect(protocol.TFile)
		if err != nil {
			return nil, err
		}
		h, err := protocol.DecodeFileHeader(p)
		if err != nil {
			return nil, err
		}
		if h.Path != want {
			return nil, fmt.Errorf("sandbox helper sent %q where %q was asked for", h.Path, want)
		}
		if h.Missing {
			plan.remove = append(plan.remove, gitcli.Entry{Path: want})
			continue
		}
		e := gitcli.Entry{Path: want, Mode: gitMode(h.Mode)}
		switch h.Mode & protocol.ModeType {
		case protocol.ModeSymlink:
			f := filepath.Join(s.Tmp, "l"+strconv.Itoa(i))
			if err := os.WriteFile(f, []byte(h.Link), 0o644); err != nil {
				return nil, err
			}
			links, linkFiles = append(links, e), append(linkFiles, f)
		case protocol.ModeRegular:
			if strings.ContainsAny(want, "\n\r") {
				f := filepath.Join(s.Tmp, "f"+strconv.Itoa(i))
				if err := writeFrom(f, r.Raw(int64(h.Size)), int64(h.Size)); err != nil {
					return nil, err
				}
				odd, oddFiles = append(odd, e), append(oddFiles, f)
				continue
			}
			if err := writeUnderFrom(s.Rules, want, r.Raw(int64(h.Size)), int64(h.Size)); err != nil {
				return nil, err
			}
			written = append(written, want)
			regular = append(regular, e)
		default:
			return nil, fmt.Errorf("sandbox helper sent %q of unknown type %o", want, h.Mode)
		}
	}
	ids, err := s.Git.HashWorkTreeFiles(ctx, s.GitDir, s.Rules, written)
	if err != nil {
		return nil, err
	}
	setIDs(regular, ids)
	if ids, err = s.Git.HashObjects(ctx, linkFiles); err != nil {
		return nil, err
	}
	setIDs(links, ids)
	for i := range odd {
		id, err := s.Git.HashFileAs(ctx, s.GitDir, s.Rules, oddFiles[i], odd[i].Path)
		if err != nil {
			return nil, err
		}
		odd[i].ID = id
	}
	return slices.Concat(regular, links, odd), nil
}

func setIDs(entries []gitcli.Entry, ids []string) {
	for i := range entries {
		entries[i].ID = ids[i]
	}
}

// writeUnder writes data at the relative path p under root, replacing
// whatever stands in the way: the mirror is ours, and a path in it that
// conflicts is stale.
func writeUnder(root, p string, data []byte) error {
	return writeUnderFrom(root, p, strings.NewReader(string(data)), int64(len(data)))
}

func writeUnderFrom(root, p string, r io.Reader, n int64) error {
	dst := filepath.Join(root, filepath.FromSlash(p))
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// A file where a directory must be: clear the way down from root.
		cur := root
		for _, c := range strings.Split(parent(p), "/") {
			cur = filepath.Join(cur, c)
			if fi, err := os.Lstat(cur); err == nil && !fi.IsDir() {
				os.Remove(cur)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	return writeFrom(dst, r, n)
}

// writeFrom writes exactly n bytes from r to a new file name.
func writeFrom(name string, r io.Reader, n int64) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, r, n); err != nil {
		f.Close()
		return fmt.Errorf("receiving %s: %w", filepath.Base(name), err)
	}
	return f.Close()
}

func ensureDir(d string) string {
	_ = os.MkdirAll(d, 0o755)
	return d
}
