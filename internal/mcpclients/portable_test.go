package mcpclients

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPortable(t *testing.T) {
	root := t.TempDir()
	other := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".mcp.json", `{"mcpServers": {"litterbox": {"type": "stdio", "command": "litterbox", "args": ["mcp"]}}}`)
	write(".cursor/mcp.json", `{"mcpServers": {"litterbox": {"command": "litterbox", "args": ["mcp", "--repo", "${workspaceFolder}"]}}}`)
	write(".codex/config.toml", "[mcp_servers.litterbox]\ncommand = \"/home/me/go/bin/litterbox\"\nargs = [\"mcp\", \"--repo\", \""+root+"\"]\n")
	write("opencode.json", `{"mcp": {"lb": {"type": "local", "command": ["litterbox", "mcp", "--repo", "`+other+`"]}}}`)
	write(".zed/settings.json", `{"context_servers": {"other": {"command": "node", "args": ["x"]}}}`)
	got := map[string]Portability{}
	for _, p := range Portable(root) {
		got[p.Client] = p
	}
	if len(got) != 4 {
		t.Errorf("entries found for %v, want claude, cursor, codex, opencode", got)
	}
	for _, c := range []string{"claude", "cursor"} {
		if !got[c].Portable || got[c].Other {
			t.Errorf("%s: %+v, want portable", c, got[c])
		}
	}
	if p := got["codex"]; p.Portable || p.Other || p.Detail != "runs /home/me/go/bin/litterbox and names this clone's path with --repo: another clone, or a teammate's machine, would get this machine's paths" || p.Fix != "litterbox mcp-config codex --write" {
		t.Errorf("codex: %+v", p)
	}
	if p := got["opencode"]; !p.Other || p.Fix != "litterbox mcp-config opencode --write --name lb" {
		t.Errorf("opencode, which serves another repository: %+v", p)
	}
}
