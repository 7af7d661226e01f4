package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/mcpclients"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/mcp"
)

// mcpConfigRepo is a fresh repository for mcp-config, with no engine
// (mcp-config needs none), by its resolved path.
func mcpConfigRepo(t *testing.T) string {
	t.Helper()
	noEngine(t)
	repo := filepath.Join(t.TempDir(), "repo")
	testenv.NewRepo(t, repo, testenv.SmallFiles)
	resolved, err := filepath.EvalSymlinks(repo)
	if err != nil {
		t.Fatal(err)
	}
	onPathAsInstalled(t)
	return resolved
}

// onPathAsInstalled puts this binary on PATH as "litterbox", as make
// install does, so mcp-config has nothing to note about PATH.
func onPathAsInstalled(t *testing.T) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(self, filepath.Join(dir, "litterbox")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// The entry runs litterbox by name, with no path of this machine (the
// note when PATH would not find this binary: systemcmd's TestOnPath).
func TestMCPConfigEntryIsPortable(t *testing.T) {
	repo := mcpConfigRepo(t)
	for client, want := range map[string]string{
		"claude": `"command": "litterbox",
      "args": [
        "mcp"
      ]`,
		"cursor": `"args": [
        "mcp",
        "--repo",
        "${workspaceFolder}"
      ]`,
	} {
		got := invoke(t, nil, "--repo", repo, "mcp-config", client, "--allow-builtin")
		if got.code != 0 || !strings.Contains(got.stdout, want) || strings.Contains(got.stdout, repo) {
			t.Errorf("%s: %+v, want %s and no path of this machine", client, got, want)
		}
	}
}

// Zed's profile enables Litterbox's tools by name: the list must be the
// server's.
func TestMCPConfigToolNamesAreTheServers(t *testing.T) {
	var served []string
	for name := range mcp.New(nil, "test", io.Discard, nil, nil).ListTools() {
		served = append(served, name)
	}
	slices.Sort(served)
	listed := slices.Sorted(slices.Values(mcpclients.ToolNames))
	if !slices.Equal(served, listed) {
		t.Errorf("mcpclients.ToolNames = %q, the server has %q", listed, served)
	}
}

// --write writes the entry and the rules, one line each; again, nothing
// changes and each line says so.
func TestMCPConfigWritesTheRulesOnce(t *testing.T) {
	repo := mcpConfigRepo(t)
	mcpJSON, settings := filepath.Join(repo, ".mcp.json"), filepath.Join(repo, ".claude", "settings.json")
	got := invoke(t, nil, "--repo", repo, "mcp-config", "claude", "--write")
	lines := strings.Split(strings.TrimSuffix(got.stdout, "\n"), "\n")
	if got.code != 0 || got.stderr != "" || len(lines) != 2 ||
		lines[0] != "Wrote MCP server 'litterbox' to "+mcpJSON+"." ||
		!strings.HasPrefix(lines[1], "Wrote Claude Code permissions (") || !strings.HasSuffix(lines[1], ") to "+settings+".") {
		t.Fatalf("first run: %+v", got)
	}
	var f struct {
		Permissions struct{ Deny, Allow []string }
	}
	data, _ := os.ReadFile(settings)
	if err := json.Unmarshal(data, &f); err != nil || !slices.Contains(f.Permissions.Deny, "Bash") || !slices.Contains(f.Permissions.Allow, "mcp__litterbox") {
		t.Fatalf("settings %s: %v", data, err)
	}
	got = invoke(t, nil, "--repo", repo, "mcp-config", "claude", "--write")
	lines = strings.Split(strings.TrimSuffix(got.stdout, "\n"), "\n")
	if got.code != 0 || len(lines) != 2 || lines[0] != mcpJSON+" already has MCP server 'litterbox'; nothing changed." ||
		!strings.HasPrefix(lines[1], settings+" already has Claude Code permissions") || !strings.HasSuffix(lines[1], "; nothing changed.") {
		t.Fatalf("second run: %+v", got)
	}
	if again, _ := os.ReadFile(settings); string(again) != string(data) {
		t.Errorf("second run changed the settings:\n%s", again)
	}
}

// --allow-builtin writes the entry, as mcp-config did before rules.
func TestMCPConfigAllowBuiltin(t *testing.T) {
	repo := mcpConfigRepo(t)
	got := invoke(t, nil, "--repo", repo, "mcp-config", "opencode", "--write", "--allow-builtin")
	if got.code != 0 || got.stdout != "Wrote MCP server 'litterbox' to "+filepath.Join(repo, "opencode.json")+".\n" || got.stderr != "" {
		t.Fatalf("%+v", got)
	}
	data, _ := os.ReadFile(filepath.Join(repo, "opencode.json"))
	if strings.Contains(string(data), "permission") {
		t.Errorf("rules written:\n%s", data)
	}
	got = invoke(t, nil, "--repo", repo, "mcp-config", "codex", "--allow-builtin")
	if got.code != 0 || strings.Count(got.stderr, "\n") != 1 || strings.Contains(got.stdout, "shell_tool") {
		t.Errorf("print: %+v", got)
	}
}

// Without --write every file is printed, each named on stderr; notes say
// what the client cannot enforce; nothing is written.
func TestMCPConfigPrintsEveryFile(t *testing.T) {
	repo := mcpConfigRepo(t)
	got := invoke(t, nil, "--repo", repo, "mcp-config", "cursor")
	var heads, notes []string
	for _, l := range strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "# ") && strings.Contains(l, ": merge into "):
			heads = append(heads, l)
		case strings.HasPrefix(l, "note: "):
			notes = append(notes, l)
		}
	}
	// stdout is the server entry's file alone: one valid JSON document.
	var entry map[string]any
	if err := json.Unmarshal([]byte(got.stdout), &entry); err != nil || entry["mcpServers"] == nil {
		t.Errorf("stdout is not the entry's file alone: %v\n%s", err, got.stdout)
	}
	if got.code != 0 || len(heads) != 3 || len(notes) == 0 ||
		!strings.HasSuffix(heads[0], "merge into "+filepath.Join(repo, ".cursor", "mcp.json")+", or run again with --write") ||
		!strings.Contains(heads[1], "merge into "+filepath.Join(repo, ".cursor", "cli.json")+", or run again with --write; on stderr, below") ||
		!strings.Contains(got.stderr, `"Shell(*)"`) || !strings.Contains(got.stderr, "\n.*\n") {
		t.Fatalf("%q %+v", heads, got)
	}
	for _, f := range []string{".cursor", ".cursorignore"} {
		if _, err := os.Stat(filepath.Join(repo, f)); !os.IsNotExist(err) {
			t.Errorf("%s written by a print: %v", f, err)
		}
	}
	// A client whose entry and rules share a file prints one document.
	got = invoke(t, nil, "--repo", repo, "mcp-config", "opencode")
	var doc map[string]any
	if err := json.Unmarshal([]byte(got.stdout), &doc); err != nil || doc["permission"] == nil || doc["mcp"] == nil {
		t.Errorf("opencode: %v %+v", err, got)
	}
}

// A rules file that cannot be merged safely is left, as is every other
// file; what to add is printed, and the error names the file.
func TestMCPConfigRefusesAFileItCannotMerge(t *testing.T) {
	repo := mcpConfigRepo(t)
	settings := filepath.Join(repo, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte("[1, 2]"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := invoke(t, nil, "--repo", repo, "mcp-config", "claude", "--write")
	lines := strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n")
	if got.code != 1 || got.stdout != "" || !strings.Contains(got.stderr, "Add this to "+settings+" by hand:") ||
		!strings.HasPrefix(lines[len(lines)-1], "Error: ") || !strings.Contains(lines[len(lines)-1], settings) {
		t.Fatalf("%+v", got)
	}
	if _, err := os.Stat(filepath.Join(repo, ".mcp.json")); !os.IsNotExist(err) {
		t.Errorf(".mcp.json written: %v", err)
	}
}
