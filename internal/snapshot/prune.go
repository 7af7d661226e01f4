package snapshot

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// pruned is what prune decided: the answer to the helper, and the
// directories whose rule file the mirror could not take this call.
type pruned struct {
	out     *protocol.Prune
	waiting []string
}

// prune updates the rules mirror from the helper's Dirs and decides which
// directories the helper skips from now on, enters again, or lists whole
// because their ignore rules changed. The mirror is host disk an agent
// fills: its rule files are charged like a call's files (their size and a
// block for each directory made for them), and past MaxCall the rest
// waits for a later call; a rule file whose path or content holds a
// secret's value never lands there.
func (s *Store) prune(ctx context.Context, st *State, d *protocol.Dirs) (*pruned, error) {
	out := &protocol.Prune{}
	res := &pruned{out: out}
	changedAt, err := s.mirrorRules(d.Rules, res)
	if err != nil {
		return nil, err
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
		return res, nil
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
		if slices.Contains(recheck, p) && !ignored[p+"/"] && !s.ignoresAll(p) {
			out.Expand = append(out.Expand, p)
			continue
		}
		keep = append(keep, p)
	}
	added, err := s.newSkips(ctx, st, newDirs, keep, ignored)
	if err != nil {
		return nil, err
	}
	out.Add = added
	keep = append(keep, added...)
	slices.Sort(keep)
	st.Prune = keep
	return res, nil
}

// mirrorRules writes the rule files the helper sent into the mirror (or
// removes those it deleted), within the call's budget, and returns the
// directories whose .gitignore changed. A rule file the host cannot store
// rules only files it cannot store either, which are withheld: it is
// skipped rather than failed.
func (s *Store) mirrorRules(rules []protocol.RuleFile, res *pruned) (changedAt []string, err error) {
	budget := s.MaxCall
	if budget <= 0 {
		budget = 1 << 62
	}
	for _, r := range rules {
		if !ValidPath(r.Path) || !isRuleFile(r.Path) || len(r.Data) > protocol.MaxRuleFile || s.tooLong(r.Path) {
			continue
		}
		dst := filepath.Join(s.Rules, filepath.FromSlash(r.Path))
		if r.Deleted {
			if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			removeEmptyDirs(s.Rules, r.Path)
		} else {
			if s.Secrets.Holds([]byte(r.Path)) != "" || s.Secrets.Holds(r.Data) != "" {
				continue
			}
			c := cost(int64(len(r.Data))) + int64(s.missingDirs(r.Path))*MinCost
			if c > budget {
				res.waiting = appendTop(res.waiting, parent(r.Path))
				continue
			}
			budget -= c
			if err := writeUnder(s.Rules, r.Path, r.Data); err != nil {
				return nil, err
			}
		}
		if path.Base(r.Path) == ".gitignore" {
			changedAt = append(changedAt, parent(r.Path))
		}
	}
	return changedAt, nil
}

// newSkips are the new directories the helper skips from now on: ignored
// ones, and those whose own .gitignore ignores everything in them
// (pytest, mypy and ruff caches, venvs), unless they hold a tracked file
// or lie under one skipped already (keep).
func (s *Store) newSkips(ctx context.Context, st *State, newDirs, keep []string, ignored map[string]bool) ([]string, error) {
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
	if len(cands) == 0 {
		return nil, nil
	}
	if err := s.ensureTip(ctx, st); err != nil {
		return nil, err
	}
	tracked, err := s.Git.TreeEntries(ctx, st.Tip, cands)
	if err != nil {
		return nil, err
	}
	var added []string
	for _, p := range cands {
		holds := false
		for t := range tracked {
			if strings.HasPrefix(t, p+"/") {
				holds = true
				break
			}
		}
		if !holds {
			added = append(added, p)
		}
	}
	return added, nil
}

// missingDirs counts the directories the mirror lacks above p.
func (s *Store) missingDirs(p string) int {
	n := 0
	for d := parent(p); d != ""; d = parent(d) {
		if _, err := os.Lstat(filepath.Join(s.Rules, filepath.FromSlash(d))); err == nil {
			break
		}
		n++
	}
	return n
}

// removeEmptyDirs removes the directories above p in root that are empty,
// deepest first, so the mirror holds no more than its rule files need.
func removeEmptyDirs(root, p string) {
	for d := parent(p); d != ""; d = parent(d) {
		if os.Remove(filepath.Join(root, filepath.FromSlash(d))) != nil {
			return
		}
	}
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
