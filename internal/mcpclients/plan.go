package mcpclients

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Options say where a client's setup goes and how much of it.
type Options struct {
	// Root is the repository: the client's own rules go in its project
	// files there.
	Root string
	// File is where the server entry goes instead of the client's project
	// file (a user-wide config, say); the rules stay in the project.
	File string
	// AllowBuiltin writes the server entry only, leaving the client's own
	// tools as they are.
	AllowBuiltin bool
}

// FileChange is one file of a client's setup: merged with what it holds,
// or, for a file mcp-config never writes, printed for the user.
type FileChange struct {
	Path string
	// Doc says what the file is; What, what mcp-config puts in it.
	Doc, What string
	Old, New  []byte
	// Manual files are the user's to edit (Zed's user settings): New is
	// printed, never written.
	Manual bool
	// Err says why the file cannot be merged safely; New then holds what
	// to add to it by hand.
	Err  error
	mode fs.FileMode
}

// Changed reports whether writing the file would change it.
func (f FileChange) Changed() bool { return !f.Manual && f.Err == nil && !bytes.Equal(f.Old, f.New) }

// Plan is a client's whole setup for one project.
type Plan struct {
	Files []FileChange
	// Notes say what the client cannot be made to enforce, and which of
	// the user's own settings contradict the rules (they are kept).
	Notes []string
}

// Err is the first file that cannot be merged, if any.
func (p Plan) Err() error {
	for _, f := range p.Files {
		if f.Err != nil {
			return f.Err
		}
	}
	return nil
}

// Write writes every file that changes, or none when one cannot be merged.
func (p Plan) Write() error {
	if err := p.Err(); err != nil {
		return err
	}
	for _, f := range p.Files {
		if f.Changed() {
			if err := writeAtomic(f.Path, f.New, f.mode); err != nil {
				return err
			}
		}
	}
	return nil
}

// Plan merges the server entry and, unless o.AllowBuiltin, the client's
// own rules into the files they go in, as they are on disk now.
func (c Client) Plan(s Server, o Options) Plan {
	return c.plan(s, o, true)
}

// Snippets is Plan for files that hold nothing yet: the smallest content
// of each, to print for the user to merge by hand.
func (c Client) Snippets(s Server, o Options) Plan {
	return c.plan(s, o, false)
}

func (c Client) plan(s Server, o Options, read bool) Plan {
	s.ApproveTools = !o.AllowBuiltin && c.format == codexTOML
	path := filepath.Join(o.Root, c.File)
	if o.File != "" {
		path = o.File
		if abs, err := filepath.Abs(o.File); err == nil {
			path = abs
		}
	}
	p := Plan{Files: []FileChange{c.serverChange(s, path, read)}}
	if o.AllowBuiltin {
		return p
	}
	for _, r := range ruleFiles[c.Name] {
		p.addRules(r, s, o.Root, read)
	}
	p.Notes = append(p.Notes, clientNotes[c.Name]...)
	return p
}

// serverChange merges the server entry into path.
func (c Client) serverChange(s Server, path string, read bool) FileChange {
	f := FileChange{Path: path, Doc: c.Doc, What: fmt.Sprintf("MCP server '%s'", s.Name), mode: 0o644}
	if read {
		f.Old, f.mode, f.Err = readFile(path)
	}
	if f.Err == nil {
		f.New, _, f.Err = c.Merge(f.Old, s)
	}
	if f.Err != nil {
		f.Err = fmt.Errorf("%s: %w", path, f.Err)
		f.New, _, _ = c.Merge(nil, s)
	}
	return f
}

// addRules merges rule file r into its file: the one already planned when
// the server entry goes there too.
func (p *Plan) addRules(r ruleFile, s Server, root string, read bool) {
	f := &FileChange{Path: filepath.Join(root, r.file), Doc: r.doc, What: r.what, Manual: r.manual, mode: 0o644}
	if r.manual {
		f.Path = zedUserSettings()
	}
	shared := false
	for i := range p.Files {
		if !r.manual && samePath(p.Files[i].Path, f.Path) && p.Files[i].Err == nil {
			f, shared = &p.Files[i], true
			f.What += " and " + r.what
		}
	}
	content := f.New
	if !shared && read && !r.manual {
		f.Old, f.mode, f.Err = readFile(f.Path)
		content = f.Old
	}
	if f.Err == nil {
		var conflicts []string
		f.New, conflicts, f.Err = r.merge(content, filepath.Base(f.Path), s)
		p.Notes = append(p.Notes, conflicts...)
	}
	if f.Err != nil {
		f.Err = fmt.Errorf("%s: %w", f.Path, f.Err)
		f.New, _, _ = r.merge(nil, filepath.Base(f.Path), s)
	}
	if !shared {
		p.Files = append(p.Files, *f)
	}
}

// samePath reports whether a and b name one file: a rule file that is
// also where --file sends the entry is merged once, with both.
func samePath(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// merge puts r's rules into content.
func (r ruleFile) merge(content []byte, file string, s Server) ([]byte, []string, error) {
	switch {
	case r.json != nil:
		return mergeJSONRules(content, file, r.json(s))
	case r.toml != nil:
		return mergeTOMLRules(content, file, r.toml)
	case r.lines != nil:
		return mergeLines(content, r.lines), nil, nil
	}
	return nil, nil, errors.New("no rules")
}

// mergeLines appends to an ignore file the pattern lines it lacks, with
// the comment (lines[0]) above them; its own lines stay.
func mergeLines(content []byte, lines []string) []byte {
	have := map[string]bool{}
	for _, l := range strings.Split(string(content), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var add []string
	for _, l := range lines[1:] {
		if !have[l] {
			add = append(add, l)
		}
	}
	if len(add) == 0 {
		return content
	}
	out := append([]byte(nil), content...)
	if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	return append(out, strings.Join(append([]string{lines[0]}, add...), "\n")+"\n"...)
}
