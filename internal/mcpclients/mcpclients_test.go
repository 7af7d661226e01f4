package mcpclients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/tailscale/hujson"
)

var srv = Server{Name: "litterbox", Command: "/usr/local/bin/litterbox", Args: []string{"mcp", "--repo", "/home/me/my project"}}

// existing is a config file each client already has, with another server
// and other settings that must survive.
var existing = map[string]string{
	"claude":   `{"mcpServers": {"other": {"command": "other-mcp", "args": ["x"]}}, "keep": 1}`,
	"cursor":   `{"mcpServers": {"other": {"command": "other-mcp"}}}`,
	"opencode": `{"$schema": "https://opencode.ai/config.json", "model": "m", "mcp": {"other": {"type": "local", "command": ["o"]}}}`,
	"zed":      `{"theme": "One Dark", "context_servers": {"other": {"command": "o", "args": []}}}`,
	"codex":    "# my settings\nmodel = \"o3\"\n\n[mcp_servers.other]\ncommand = \"other-mcp\" # keep me\nargs = []\n\n[profiles.fast]\nmodel = \"mini\"\n",
}

// entryOf reads the litterbox entry back the way the client would.
func entryOf(t *testing.T, c Client, data []byte) (command string, args []string, others int) {
	t.Helper()
	if c.format == codexTOML {
		var f struct {
			Servers map[string]struct {
				Command string
				Args    []string
			} `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(string(data), &f); err != nil {
			t.Fatalf("result is not TOML: %v\n%s", err, data)
		}
		e := f.Servers["litterbox"]
		return e.Command, e.Args, len(f.Servers) - 1
	}
	var f map[string]map[string]map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		// Top-level values of other types are fine; read only the section.
		var loose map[string]json.RawMessage
		if err := json.Unmarshal(data, &loose); err != nil {
			t.Fatalf("result is not JSON: %v\n%s", err, data)
		}
		f = map[string]map[string]map[string]any{}
		for k, v := range loose {
			var sec map[string]map[string]any
			if json.Unmarshal(v, &sec) == nil {
				f[k] = sec
			}
		}
	}
	section, _ := c.jsonEntry(srv)
	e := f[section]["litterbox"]
	switch c.format {
	case opencodeJSON:
		cmd := toStrings(e["command"])
		if e["type"] != "local" || len(cmd) == 0 {
			t.Fatalf("opencode entry %v", e)
		}
		return cmd[0], cmd[1:], len(f[section]) - 1
	case claudeJSON:
		if e["type"] != "stdio" {
			t.Fatalf("claude entry %v", e)
		}
	}
	cmd, _ := e["command"].(string)
	return cmd, toStrings(e["args"]), len(f[section]) - 1
}

func toStrings(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func TestWriteFileNewMergedIdempotent(t *testing.T) {
	for _, c := range Clients {
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			// A new file, in a directory that does not exist yet.
			fresh := filepath.Join(dir, "new", c.File)
			if changed, err := c.WriteFile(fresh, srv); err != nil || !changed {
				t.Fatalf("new file: changed=%v err=%v", changed, err)
			}
			data, _ := os.ReadFile(fresh)
			if cmd, args, others := entryOf(t, c, data); cmd != srv.Command || !reflect.DeepEqual(args, srv.Args) || others != 0 {
				t.Fatalf("new file holds %q %q (+%d):\n%s", cmd, args, others, data)
			}

			// An existing file: the other server and settings stay.
			path := filepath.Join(dir, c.File)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(existing[c.Name]), 0o600); err != nil {
				t.Fatal(err)
			}
			if changed, err := c.WriteFile(path, srv); err != nil || !changed {
				t.Fatalf("merge: changed=%v err=%v", changed, err)
			}
			merged, _ := os.ReadFile(path)
			if cmd, args, others := entryOf(t, c, merged); cmd != srv.Command || !reflect.DeepEqual(args, srv.Args) || others != 1 {
				t.Fatalf("merged file holds %q %q (+%d others):\n%s", cmd, args, others, merged)
			}
			for _, keep := range []string{"other", "keep", "One Dark", "model", "# keep me", "[profiles.fast]"} {
				if strings.Contains(existing[c.Name], keep) && !strings.Contains(string(merged), keep) {
					t.Errorf("merge lost %q:\n%s", keep, merged)
				}
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600 kept", fi.Mode().Perm())
			}

			// Again: nothing changes, not a byte.
			if changed, err := c.WriteFile(path, srv); err != nil || changed {
				t.Fatalf("second write: changed=%v err=%v", changed, err)
			}
			again, _ := os.ReadFile(path)
			if string(again) != string(merged) {
				t.Fatalf("second write changed the file:\n%s\n---\n%s", merged, again)
			}

			// Another repository replaces our entry, not the others.
			moved := srv
			moved.Args = []string{"mcp", "--repo", "/elsewhere"}
			if changed, err := c.WriteFile(path, moved); err != nil || !changed {
				t.Fatalf("update: changed=%v err=%v", changed, err)
			}
			updated, _ := os.ReadFile(path)
			if _, args, others := entryOf(t, c, updated); !reflect.DeepEqual(args, moved.Args) || others != 1 {
				t.Fatalf("updated file holds %q (+%d):\n%s", args, others, updated)
			}
			if strings.Count(string(updated), "\"litterbox\":")+strings.Count(string(updated), "[mcp_servers.litterbox]") != 1 {
				t.Fatalf("entry not replaced in place:\n%s", updated)
			}
		})
	}
}

func TestWriteFileRefusesWhatItCannotMergeSafely(t *testing.T) {
	cases := map[string]string{
		"claude": "[1, 2]",
		"zed":    "// Zed settings\n{\n  \"theme\": \"One Dark\",\n",
		"codex":  "[mcp_servers\n",
	}
	for name, content := range cases {
		c, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteFile(path, srv); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v, want a refusal naming the file", name, err)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("%s: refused file was changed:\n%s", name, data)
		}
	}
}

// Zed's settings.json is JSON with comments and trailing commas: the
// entry goes in, every comment and other setting stays, and a second merge
// changes nothing. (It used to be refused.)
func TestMergeKeepsComments(t *testing.T) {
	zed, err := Lookup("zed")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		"// Zed settings\n{\n  \"theme\": \"One Dark\", // mine\n}\n",
		"// Zed settings\n{\n  \"theme\": \"One Dark\", // mine\n  \"context_servers\": {\n    \"other\": {\"command\": \"o\"}, /* keep */\n  },\n}\n",
		"{\n  \"context_servers\": {\n    /* old */ \"litterbox\": {\"command\": \"old\"},\n  }, // x\n}\n",
	} {
		out, changed, err := zed.Merge([]byte(in), srv)
		if err != nil || !changed {
			t.Fatalf("%q: changed %v, %v", in, changed, err)
		}
		for _, comment := range regexp.MustCompile(`//[^\n]*|/\*.*?\*/`).FindAllString(in, -1) {
			if !strings.Contains(string(out), comment) {
				t.Errorf("comment %q lost:\n%s", comment, out)
			}
		}
		std, err := hujson.Standardize(out)
		if err != nil {
			t.Fatalf("result is not JWCC: %v\n%s", err, out)
		}
		var got struct {
			Theme   string                              `json:"theme"`
			Servers map[string]struct{ Command string } `json:"context_servers"`
		}
		if err := json.Unmarshal(std, &got); err != nil {
			t.Fatal(err)
		}
		if got.Servers["litterbox"].Command != srv.Command || (strings.Contains(in, "other") && got.Servers["other"].Command != "o") || (strings.Contains(in, "theme") && got.Theme != "One Dark") {
			t.Errorf("merged settings %+v:\n%s", got, out)
		}
		if again, changed, err := zed.Merge(out, srv); err != nil || changed || string(again) != string(out) {
			t.Errorf("second merge changed it (%v):\n%s", err, again)
		}
	}
}

func TestLookup(t *testing.T) {
	if c, err := Lookup("Claude"); err != nil || c.File != ".mcp.json" {
		t.Fatalf("Lookup(Claude) = %+v, %v", c, err)
	}
	if _, err := Lookup("vim"); err == nil || !strings.Contains(err.Error(), "claude, codex, opencode, cursor, zed") {
		t.Fatalf("Lookup(vim): %v", err)
	}
}

func TestSnippetQuotesForTOML(t *testing.T) {
	c, _ := Lookup("codex")
	s, err := c.Snippet(Server{Name: "litter box", Command: `C:\bin\lb "x"`, Args: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]map[string]map[string]any
	if _, err := toml.Decode(s, &f); err != nil || f["mcp_servers"]["litter box"]["command"] != `C:\bin\lb "x"` {
		t.Fatalf("snippet %q: %v %v", s, f, err)
	}
}

func TestCodexRefusesInlineServers(t *testing.T) {
	c, _ := Lookup("codex")
	for _, content := range []string{
		"[mcp_servers]\nlitterbox = { command = \"/old\", args = [\"mcp\"] }\n",
		"mcp_servers = { other = { command = \"other-bin\" } }\n",
		"mcp_servers.litterbox.command = \"/old\"\n",
	} {
		path := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteFile(path, srv); err == nil {
			t.Errorf("merged into %q", content)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("changed %q to %q", content, data)
		}
	}
	// A [mcp_servers] table holding only other servers as sub-tables is fine.
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[mcp_servers.other]\ncommand = \"o\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WriteFile(path, srv); err != nil {
		t.Fatal(err)
	}
}

// Every file mcp-config writes in a work tree is one of Litterbox's own,
// which the uncommitted-changes warnings leave out, as is the directory it
// lies in while git does not track it.
func TestEveryProjectFileIsLitterboxsOwn(t *testing.T) {
	root := t.TempDir()
	checked := 0
	for _, c := range Clients {
		for _, f := range c.Snippets(srv, Options{Root: root}).Files {
			rel, err := filepath.Rel(root, f.Path)
			if f.Manual || err != nil || strings.HasPrefix(rel, "..") {
				continue // the user's own settings, outside the work tree
			}
			rel = filepath.ToSlash(rel)
			checked++
			if !hostrepo.OwnFile(rel) {
				t.Errorf("%s: %s is not among hostrepo's own files", c.Name, rel)
			}
			if dir, _, ok := strings.Cut(rel, "/"); ok && !hostrepo.OwnFile(dir+"/") {
				t.Errorf("%s: %s/ is not among hostrepo's own files", c.Name, dir)
			}
		}
	}
	if checked < len(Clients) {
		t.Fatalf("checked %d files of %d clients", checked, len(Clients))
	}
}
