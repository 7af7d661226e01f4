package review

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
)

// pinnedAttrs are the attributes by which git, while it checks out or
// merges a file, runs a program (a filter's smudge and clean, a merge
// driver) or rewrites the file's bytes (line endings, ident, encoding).
var pinnedAttrs = []string{"filter", "merge", "text", "eol", "crlf", "ident", "working-tree-encoding"}

// Pins in $GIT_DIR/info/attributes are between these lines; a block left
// by an apply that was killed is recognised by them and removed by the
// next one (unpinLeft). "(new file)" says the apply made the file.
const (
	pinBegin    = "# litterbox apply: attributes pinned to the user's own while it runs"
	pinNewFile  = " (new file)"
	pinEnd      = "# litterbox apply: end of pinned attributes"
	attrsGitDir = "info/attributes"
)

// pinAttributes keeps the branch's .gitattributes from choosing how the
// host's git writes the files the pick touches: which of the user's
// filters and merge drivers run on them, and their line endings. git 2.39
// reads attributes from the work tree and the index as the pick changes
// them (there is no --attr-source), so a branch that adds "* filter=x"
// would have the user's filter x run on every file it brings. When the
// commits from..tip change a .gitattributes, each path they touch gets,
// in $GIT_DIR/info/attributes (which outranks every .gitattributes), the
// values the user's work tree gives it now. The returned func removes the
// pins again.
func pinAttributes(ctx context.Context, g *gitcli.Client, file string, paths []string) (unpin func(), err error) {
	if !anyAttributesFile(paths) {
		return func() {}, nil
	}
	values, err := userAttrs(ctx, g, paths)
	if err != nil {
		return nil, fmt.Errorf("reading the attributes of the paths to apply: %w", err)
	}
	if err := writePins(file, paths, values); err != nil {
		return nil, fmt.Errorf("pinning the attributes of the paths to apply in %s: %w", file, err)
	}
	return func() { _ = removePins(file) }, nil
}

func anyAttributesFile(paths []string) bool {
	for _, p := range paths {
		if path.Base(p) == ".gitattributes" {
			return true
		}
	}
	return false
}

// userAttrs are pinnedAttrs of each path as the work tree (the user's
// HEAD, and any change of their own) gives them: "unspecified", "set",
// "unset" or a value.
func userAttrs(ctx context.Context, g *gitcli.Client, paths []string) (map[string]map[string]string, error) {
	return g.Attrs(ctx, paths, pinnedAttrs...)
}

func attrsFile(ctx context.Context, g *gitcli.Client) (string, error) {
	p, err := g.Output(ctx, "rev-parse", "--git-path", attrsGitDir)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.Dir, p)
	}
	return p, nil
}

// writePins appends the block of pins to file, keeping what the user has
// there (a later line outranks an earlier one).
func writePins(file string, paths []string, values map[string]map[string]string) error {
	if err := removePins(file); err != nil {
		return err
	}
	old, err := os.ReadFile(file)
	created := errors.Is(err, fs.ErrNotExist)
	if err != nil && !created {
		return err
	}
	var b strings.Builder
	b.Write(old)
	if len(old) > 0 && old[len(old)-1] != '\n' {
		b.WriteByte('\n')
	}
	b.WriteString(pinBegin)
	if created {
		b.WriteString(pinNewFile)
	}
	b.WriteByte('\n')
	for _, p := range paths {
		b.WriteString(pinLine(p, values[p]))
	}
	b.WriteString(pinEnd + "\n")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return os.WriteFile(file, []byte(b.String()), 0o644)
}

// pinLine is one line of the block: the path as a quoted pattern that
// matches it alone, then each attribute as the user's tree gives it.
func pinLine(p string, v map[string]string) string {
	var b strings.Builder
	b.WriteString(attrPattern(p))
	for _, a := range pinnedAttrs {
		b.WriteByte(' ')
		switch val := v[a]; val {
		case "set":
			b.WriteString(a)
		case "unset":
			b.WriteString("-" + a)
		case "", "unspecified":
			b.WriteString("!" + a)
		default:
			b.WriteString(a + "=" + val)
		}
	}
	b.WriteByte('\n')
	return b.String()
}

// attrPattern is a pattern of an attributes file that matches path p
// alone: anchored at the root by its leading slash, its glob characters
// escaped, and C-quoted (git unquotes a pattern that starts with a double
// quote), so spaces, quotes and any byte keep their meaning.
func attrPattern(p string) string {
	var glob strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*', '?', '[', ']', '\\', '!', '#':
			glob.WriteByte('\\')
			glob.WriteByte(c)
		default:
			glob.WriteByte(c)
		}
	}
	return cQuote("/" + glob.String())
}

func cQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// removePins takes the block of pins out of file, and the file away when
// the apply made it and nothing else is in it.
func removePins(file string) error {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	var kept strings.Builder
	in, found, created := false, false, false
	for _, l := range lines {
		t := strings.TrimRight(l, "\n")
		switch {
		case !in && strings.HasPrefix(t, pinBegin):
			in, found = true, true
			created = created || strings.HasSuffix(t, pinNewFile)
		case in && t == pinEnd:
			in = false
		case !in:
			kept.WriteString(l)
		}
	}
	if !found {
		return nil
	}
	if created && strings.TrimSpace(kept.String()) == "" {
		return os.Remove(file)
	}
	return os.WriteFile(file, []byte(kept.String()), 0o644)
}

// unpinLeft removes the pins an apply killed while it ran left behind.
func unpinLeft(file string) error {
	if err := removePins(file); err != nil {
		return fmt.Errorf("removing the attributes an earlier apply pinned in %s: %w", file, err)
	}
	return nil
}
