package snapshot

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// A clean filter is a program of the user's, named in their git config,
// that `git add` runs on a file whose attributes name its driver. The
// sandbox's .gitattributes (the rules mirror) give each path its
// attributes, so without a check an agent would choose which of the
// user's programs run on this machine, on content it wrote. The rule
// that holds by construction: a driver runs on a path only when the
// user's own attributes (their work tree's .gitattributes, info/attributes
// and core.attributesFile) give that path the same driver. Git LFS is the
// exception an agent may choose: its clean filter only stores the content
// as an object here and writes a pointer, which is what a repository
// using LFS expects of a new file. Any other file is stored as written,
// and the call says so.

// lfsDriver is git LFS's filter driver.
const lfsDriver = "lfs"

// noDriver are the values of the filter attribute that name no driver.
var noDriver = []string{"", "unspecified", "unset", "set"}

// unfiltered returns those of paths (relative to the mirror) whose filter
// driver the mirror names and the user's attributes do not give them.
// When no .gitattributes of the mirror names a driver but LFS, every
// driver that applies comes from the user's own files and it costs no git
// at all; otherwise one or two.
func (s *Store) unfiltered(ctx context.Context, plan *planResult, paths []string) (map[string]bool, error) {
	if len(paths) == 0 || !mirrorNamesDrivers(s.Rules) {
		return nil, nil
	}
	mirror, err := s.filterAttrs(ctx, plan, paths)
	if err != nil {
		return nil, err
	}
	var named []string
	for _, p := range paths {
		if d := mirror[p]; !slices.Contains(noDriver, d) && d != lfsDriver {
			named = append(named, p)
		}
	}
	if len(named) == 0 {
		return nil, nil
	}
	yours, err := s.Git.Attrs(ctx, named, "filter")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range named {
		if yours[p]["filter"] != mirror[p] {
			out[p] = true
		}
	}
	return out, nil
}

// mirrorNamesDrivers reports whether a .gitattributes file of the rules
// mirror may name a filter driver other than LFS: a word "filter=X" with
// X not lfs, anywhere in it (a macro's definition included; an attribute
// is set no other way). It errs towards yes: a file it cannot read counts.
func mirrorNamesDrivers(rules string) bool {
	found := false
	err := filepath.WalkDir(rules, func(p string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		if d.IsDir() || d.Name() != ".gitattributes" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, w := range strings.Fields(string(data)) {
			if v, ok := strings.CutPrefix(w, "filter="); ok && v != lfsDriver {
				found = true
				return nil
			}
		}
		return nil
	})
	return found || err != nil && !errors.Is(err, fs.ErrNotExist)
}

// filterAttrs is the filter driver the mirror gives each path: from the
// attributes the call read already, or read now.
func (s *Store) filterAttrs(ctx context.Context, plan *planResult, paths []string) (map[string]string, error) {
	out := make(map[string]string, len(paths))
	if a := plan.asIs; a != nil {
		for _, p := range paths {
			if v, ok := a.attrs[p]["filter"]; ok {
				out[p] = v
			}
		}
		if len(out) == len(paths) {
			return out, nil
		}
	}
	attrs, err := s.Git.WorkTreeAttrs(ctx, s.GitDir, ensureDir(s.Rules), paths, "filter")
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		out[p] = attrs[p]["filter"]
	}
	return out, nil
}

// mirrored is the path of p's file in the rules mirror.
func (s *Store) mirrored(p string) string {
	return filepath.Join(s.Rules, filepath.FromSlash(p))
}
