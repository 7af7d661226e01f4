// Package steering says which files of a sandbox's branch steer programs
// on the host once they are merged (git hooks, agents' instructions and
// settings, image builds, direnv), so review can warn before they are
// taken.
package steering

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/config"
)

// Change is a file a sandbox's branch changes that steers sandboxes
// or programs on the host once it is merged, and what it steers.
type Change struct {
	Path string `json:"path"`
	What string `json:"what"`
}

func (c Change) String() string { return agenttext.Shown(c.Path) + " (" + c.What + ")" }

// What the steering files steer, as review shows it.
const (
	SteersHooks        = "run as git hooks on this machine"
	SteersInstructions = "read by AI agents as instructions"
	SteersAgents       = "agent or editor config"
	SteersBuild        = "builds the sandbox image: its RUN steps run on this machine's engine"
	SteersDotfile      = "configuration a tool reads (a dotfile)"
)

// What says what the file at p (slash-separated, from the root)
// steers on the host, "" for an ordinary file. named are the paths this
// repository's own settings point at (its git config, the image build),
// each a file or a directory, with what it steers.
func What(p string, named map[string]string) string {
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
	for q, what := range named {
		if under(strings.ToLower(q)) {
			return what
		}
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
	case p == ".mcp.json" || p == "opencode.json" || base == ".cursorignore" || under(".claude", ".codex", ".cursor", ".zed", ".vscode"):
		return SteersAgents
	// Agents read nested instruction files too, for the directory they
	// work in.
	case instructionFiles[base] || p == ".github/copilot-instructions.md" || under(".github/instructions", ".clinerules"):
		return SteersInstructions
	case under(".husky", ".githooks") || p == "lefthook.yml" || p == ".lefthook.yml":
		return SteersHooks
	case p == ".pre-commit-config.yaml":
		return "hooks pre-commit installs and runs on this machine"
	case dockerFile(base):
		return SteersBuild
	case base == ".envrc":
		return "run by direnv"
	case base == ".lfsconfig":
		return "the LFS server your git-lfs contacts"
	case dotted(p):
		return SteersDotfile
	}
	return ""
}

// dotted reports whether a component of p is hidden (".x"): by the rule
// every tool keeps, a dotfile or a file in a dot directory is
// configuration some program reads on its own (.gitignore, .npmrc,
// .editorconfig, .vscode/, .github/), not content.
func dotted(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if len(c) > 1 && c[0] == '.' && c != ".." {
			return true
		}
	}
	return false
}

// instructionFiles are the names AI agents read as instructions, in any
// directory.
var instructionFiles = map[string]bool{
	"claude.md": true, "claude.local.md": true, "agents.md": true, "gemini.md": true,
	".cursorrules": true, ".windsurfrules": true,
}

// dockerFile: base is a conventional name of a Dockerfile or its ignore
// file, which a [docker] build or devcontainer.json may name.
func dockerFile(base string) bool {
	switch {
	case base == "dockerfile" || base == "containerfile" || base == ".dockerignore" || base == ".containerignore":
		return true
	case strings.HasPrefix(base, "dockerfile.") || strings.HasSuffix(base, ".dockerfile"):
		return true
	}
	return false
}

// GitConfig reads a `git config --list -z --show-origin` listing
// for the settings that make git on this machine read or run a file, and
// returns those files (or directories) inside the work tree at root,
// relative to it, with what they steer.
func GitConfig(listing, root string) map[string]string {
	out := map[string]string{}
	fields := strings.Split(listing, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		origin := strings.TrimPrefix(fields[i], "file:")
		key, value, _ := strings.Cut(fields[i+1], "\n")
		what, paths := configPaths(strings.ToLower(key), value)
		// include.path is relative to the file that includes it; git runs
		// everything else from the top of the work tree.
		dir := root
		if strings.HasSuffix(strings.ToLower(key), ".path") {
			dir = filepath.Dir(origin)
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(root, dir)
			}
		}
		for _, p := range paths {
			if rel, ok := insideTree(root, dir, p); ok {
				out[rel] = what + " (" + key + ")"
			}
		}
	}
	return out
}

// configPaths says what the git setting key steers and which paths its
// value names: the value itself for a path setting, the words that look
// like paths for a command.
func configPaths(key, value string) (string, []string) {
	section, rest, _ := strings.Cut(key, ".")
	name := rest[strings.LastIndex(rest, ".")+1:]
	switch {
	case key == "core.hookspath":
		return SteersHooks, []string{value}
	case key == "core.attributesfile":
		return "filters and diff drivers your git runs", []string{value}
	case key == "core.excludesfile":
		return "what your git ignores", []string{value}
	case (section == "include" || section == "includeif") && name == "path":
		return "your git config", []string{value}
	case commandKeys[key],
		section == "filter" && (name == "clean" || name == "smudge" || name == "process"),
		section == "diff" && (name == "textconv" || name == "command"),
		section == "merge" && name == "driver":
		return "run by your git", commandPaths(value)
	}
	return "", nil
}

// commandKeys are git settings, besides drivers and filters, whose value
// is a command git runs.
var commandKeys = map[string]bool{
	"core.fsmonitor": true, "core.sshcommand": true, "core.pager": true, "core.editor": true,
	"sequence.editor": true, "credential.helper": true, "gpg.program": true,
}

// commandPaths are the words of a command line that name a file by a path
// (with a slash): a word without one is looked up in PATH, not in the
// work tree.
func commandPaths(cmd string) []string {
	var out []string
	for _, w := range strings.Fields(cmd) {
		w = strings.Trim(w, `"'`)
		if strings.Contains(w, "/") {
			out = append(out, w)
		}
	}
	return out
}

// insideTree is p (relative to dir when not absolute) relative to the work
// tree's root, if it lies inside it; a path from $HOME (~) never does.
func insideTree(root, dir, p string) (string, bool) {
	if p == "" || strings.HasPrefix(p, "~") {
		return "", false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}
