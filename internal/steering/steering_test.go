package steering

import (
	"maps"
	"testing"
)

// Every steering file of issue 27, at the depths that matter, in any case;
// and the paths a repository's settings name.
func TestControlsSteeringFiles(t *testing.T) {
	named := map[string]string{"tools/Hooks": "run as git hooks on this machine (core.hookspath)", "build/App.Dockerfile": SteersBuild}
	for p, want := range map[string]string{
		".cursorignore":                       SteersAgents,
		"web/.cursorignore":                   SteersAgents,
		"CLAUDE.md":                           SteersInstructions,
		"pkg/deep/CLAUDE.md":                  SteersInstructions,
		"claude.md":                           SteersInstructions,
		"CLAUDE.local.md":                     SteersInstructions,
		"AGENTS.md":                           SteersInstructions,
		"svc/AGENTS.md":                       SteersInstructions,
		"GEMINI.md":                           SteersInstructions,
		".cursorrules":                        SteersInstructions,
		".github/copilot-instructions.md":     SteersInstructions,
		".GitHub/Copilot-Instructions.md":     SteersInstructions,
		".github/instructions/go.md":          SteersInstructions,
		".husky/pre-commit":                   SteersHooks,
		".husky":                              SteersHooks,
		".githooks/post-checkout":             SteersHooks,
		"lefthook.yml":                        SteersHooks,
		".pre-commit-config.yaml":             "hooks pre-commit installs and runs on this machine",
		"Dockerfile":                          SteersBuild,
		"docker/Dockerfile":                   SteersBuild,
		"Dockerfile.dev":                      SteersBuild,
		"api.dockerfile":                      SteersBuild,
		"Containerfile":                       SteersBuild,
		".dockerignore":                       SteersBuild,
		"ctx/.dockerignore":                   SteersBuild,
		"tools/hooks/pre-push":                "run as git hooks on this machine (core.hookspath)",
		"TOOLS/HOOKS":                         "run as git hooks on this machine (core.hookspath)",
		"build/app.dockerfile":                SteersBuild,
		"tools/hooksish":                      "",
		"src/.github/copilot-instructions.md": SteersDotfile,
		".lfsconfig":                          "the LFS server your git-lfs contacts",
		"sub/.lfsconfig":                      "the LFS server your git-lfs contacts",
		".gitignore":                          SteersDotfile,
		"web/.npmrc":                          SteersDotfile,
		".config/tool/settings":               SteersDotfile,
		"a/.b/c.go":                           SteersDotfile,
		"notes.d/x.md":                        "",
		"docs/agents.md.txt":                  "",
		"husky/pre-commit":                    "",
		"sub/.pre-commit-config.yaml":         SteersDotfile,
		"dockerfiles.md":                      "",
		"README.md":                           "",
	} {
		if got := What(p, named); got != want {
			t.Errorf("What(%q) = %q, want %q", p, got, want)
		}
	}
}

// The settings of a `git config --list -z --show-origin` listing that make
// git read or run a file inside the work tree, and only those.
func TestGitConfigSteering(t *testing.T) {
	root := "/home/u/repo"
	entry := func(origin, kv string) string { return "file:" + origin + "\x00" + kv + "\x00" }
	listing := entry("/etc/gitconfig", "filter.lfs.clean\ngit-lfs clean -- %f") +
		entry("/home/u/.gitconfig", "core.excludesfile\n~/.gitignore_global") +
		entry("/home/u/.gitconfig", "core.pager\nless") +
		entry(".git/config", "core.hookspath\n.githooks") +
		entry(".git/config", "core.attributesfile\n/home/u/repo/meta/attrs") +
		entry(".git/config", "core.excludesfile\n/home/u/elsewhere/ignore") +
		entry(".git/config", "include.path\n../shared.gitconfig") +
		entry(".git/config", "includeIf.gitdir:/home/.path\n../conf/extra") +
		entry(".git/config", "filter.crypt.clean\n./tools/clean.sh %f") +
		entry(".git/config", "filter.crypt.smudge\nsh 'tools/smudge.sh' %f") +
		entry(".git/config", "diff.pdf.textconv\nbin/pdf2txt") +
		entry(".git/config", "merge.ours.driver\nscripts/merge %O %A %B") +
		entry(".git/config", "core.fsmonitor\n.git/../fsmon.sh") +
		entry(".git/config", "core.fsmonitor\ntrue") +
		entry(".git/config", "core.bare\nfalse") +
		entry(".git/config", "remote.origin.url\nhttps://example.com/x.git") +
		entry(".git/config", "core.hookspath\n../outside") +
		entry(".git/config", "core.sshcommand\nssh -i /home/u/repo/keys/id")
	got := GitConfig(listing, root)
	want := map[string]string{
		".githooks":        "run as git hooks on this machine (core.hookspath)",
		"meta/attrs":       "filters and diff drivers your git runs (core.attributesfile)",
		"shared.gitconfig": "your git config (include.path)",
		"conf/extra":       "your git config (includeIf.gitdir:/home/.path)",
		"tools/clean.sh":   "run by your git (filter.crypt.clean)",
		"tools/smudge.sh":  "run by your git (filter.crypt.smudge)",
		"bin/pdf2txt":      "run by your git (diff.pdf.textconv)",
		"scripts/merge":    "run by your git (merge.ours.driver)",
		"fsmon.sh":         "run by your git (core.fsmonitor)",
		"keys/id":          "run by your git (core.sshcommand)",
	}
	if !maps.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// With core.hooksPath named, a hook file under it is steering.
	if what := What(".githooks/pre-commit", got); what != want[".githooks"] {
		t.Errorf("What(.githooks/pre-commit) = %q", what)
	}
	if got := GitConfig("", root); len(got) != 0 {
		t.Errorf("empty listing: %q", got)
	}
}

func TestControls(t *testing.T) {
	for p, want := range map[string]string{
		".litterbox.toml":                 "sandbox config",
		".litterbox.local.toml":           "sandbox config",
		".devcontainer/devcontainer.json": "dev container config",
		".devcontainer.json":              "dev container config",
		".gitattributes":                  "filters and diff drivers your git runs",
		"sub/dir/.gitattributes":          "filters and diff drivers your git runs",
		".gitmodules":                     "submodule URLs your git fetches",
		".mcp.json":                       "agent or editor config",
		".claude/settings.json":           "agent or editor config",
		".vscode/tasks.json":              "agent or editor config",
		".envrc":                          "run by direnv",
		"sub/.envrc":                      "run by direnv",
		".VSCODE/tasks.json":              "agent or editor config",
		".claude":                         "agent or editor config",
		".LITTERBOX.LOCAL.TOML":           "sandbox config",
		"src/.litterbox.toml":             SteersDotfile,
		"docs/.mcp.json":                  SteersDotfile,
		".devcontainerish":                SteersDotfile,
		"README.md":                       "",
	} {
		if got := What(p, nil); got != want {
			t.Errorf("controls(%q) = %q, want %q", p, got, want)
		}
	}
}
