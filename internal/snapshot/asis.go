package snapshot

import (
	"context"
	"strings"
)

// convertingAttrs are the attributes under which `git add` stores other
// bytes than the file's own, whatever the content; eolAttrs those under
// which it may, for a content with a CR: crlf is git's old name for text,
// which it still reads.
var (
	convertingAttrs = []string{"filter", "ident", "working-tree-encoding"}
	eolAttrs        = []string{"text", "eol", "crlf"}
)

// asIs says, for the files one call fetches, which `git add` would store
// byte for byte: those the snapshot may commit without hashing them
// through git (a moved file's blob, reuse; a large call's files through
// fast-import, importer). It is read once a call, as hash-object reads the
// attributes and the config.
type asIs struct {
	attrs    map[string]map[string]string
	autocrlf bool
}

// asIsFor reads the rules for the plan's files to fetch, the first time a
// call asks.
func (s *Store) asIsFor(ctx context.Context, p *planResult) (*asIs, error) {
	if p.asIs != nil {
		return p.asIs, nil
	}
	attrs, err := s.Git.WorkTreeAttrs(ctx, s.GitDir, ensureDir(s.Rules), p.fetch, append(convertingAttrs, eolAttrs...)...)
	if err != nil {
		return nil, err
	}
	// Unless core.autocrlf is false, it makes every file text=auto; when
	// git cannot say, it may.
	v, err := s.Git.WorkTreeConfig(ctx, s.GitDir, ensureDir(s.Rules), "--type=bool-or-str", "--default=false", "--get", "core.autocrlf")
	p.asIs = &asIs{attrs: attrs, autocrlf: err != nil || strings.TrimSpace(v) != "false"}
	return p.asIs, nil
}

// bytesAsIs reports whether git stores the file at path p with its own
// bytes, but for a CR (eol): no attribute converts it, and it is no rule
// file (the mirror takes those as written).
func (a *asIs) bytesAsIs(p string) bool {
	return !anySet(a.attrs[p], convertingAttrs) && !isRuleFile(p)
}

// eol reports whether end-of-line conversion may change a CR at p.
func (a *asIs) eol(p string) bool { return a.autocrlf || anySet(a.attrs[p], eolAttrs) }

// anySet reports whether attrs set one of names; an attribute git did not
// answer for counts as set.
func anySet(attrs map[string]string, names []string) bool {
	for _, a := range names {
		if v, ok := attrs[a]; !ok || v != "unspecified" && v != "unset" {
			return true
		}
	}
	return false
}
