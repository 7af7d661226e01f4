package hostrepo

import (
	"context"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/config"
)

// ownFiles are the files of a work tree that Litterbox writes for the
// person, never for the sandbox: the local config, and the MCP clients'
// project files mcp-config writes (internal/mcpclients' tests hold its
// plans to this list). A directory (ending in "/") stands for what git
// reports of it while it is untracked.
var ownFiles = map[string]bool{
	config.LocalFile:        true,
	".mcp.json":             true,
	".claude/":              true,
	".claude/settings.json": true,
	".codex/":               true,
	".codex/config.toml":    true,
	"opencode.json":         true,
	".cursor/":              true,
	".cursor/mcp.json":      true,
	".cursor/cli.json":      true,
	".cursorignore":         true,
	".zed/":                 true,
	".zed/settings.json":    true,
}

// OwnFile reports whether path (slash-separated, relative to the work
// tree) is one of Litterbox's own files.
func OwnFile(path string) bool { return ownFiles[path] }

// Uncommitted counts the work tree's uncommitted changes that a sandbox
// would miss: Litterbox's own files are left out, since they never belong
// in one.
func (r *Repo) Uncommitted(ctx context.Context) (int, error) {
	paths, err := r.Git.DirtyPaths(ctx)
	n := 0
	for _, p := range paths {
		if !OwnFile(strings.TrimPrefix(p, "./")) {
			n++
		}
	}
	return n, err
}
