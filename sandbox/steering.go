package sandbox

import (
	"context"
	"path"
	"strings"

	"github.com/litterbox-dev/litterbox/config"
)

// ControlChange is a file a sandbox's branch changes that steers sandboxes
// or programs on the host once it is merged, and what it steers.
type ControlChange struct {
	Path string `json:"path"`
	What string `json:"what"`
}

func (c ControlChange) String() string { return shown(c.Path) + " (" + c.What + ")" }

// controls says what the file at p (slash-separated, from the root)
// steers on the host, "" for an ordinary file.
func controls(p string) string {
	// Case-insensitive file systems (macOS) read .VSCODE as .vscode; a
	// directory may also arrive as a symlink of that name.
	p = strings.ToLower(p)
	base := path.Base(p)
	under := func(dirs ...string) bool {
		for _, d := range dirs {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
	switch {
	case p == config.File || p == config.LocalFile:
		return "sandbox config"
	case p == ".devcontainer.json" || under(".devcontainer"):
		return "dev container config"
	case base == ".gitattributes":
		return "filters and diff drivers your git runs"
	case p == ".gitmodules":
		return "submodule URLs your git fetches"
	case p == ".mcp.json" || p == "opencode.json" || under(".claude", ".codex", ".cursor", ".zed", ".vscode"):
		return "agent or editor config"
	case base == ".envrc":
		return "run by direnv"
	}
	return ""
}

// ControlChanges lists the files the sandbox's branch changes (since its
// base) that steer sandboxes or programs on the host: review shows them
// before anything else, and merge asks first. tip is the branch tip they
// were read from, for Options.Tip.
func (m *Manager) ControlChanges(ctx context.Context, name string) (cs []ControlChange, tip string, err error) {
	w, err := m.work(ctx, name)
	if err != nil {
		return nil, "", err
	}
	out, err := m.Git.Output(ctx, "diff", "--name-only", "-z", "--no-renames", w.Base, w.Tip, "--")
	if err != nil {
		return nil, "", err
	}
	for _, p := range strings.Split(out, "\x00") {
		if what := controls(p); p != "" && what != "" {
			cs = append(cs, ControlChange{Path: p, What: what})
		}
	}
	return cs, w.Tip, nil
}
