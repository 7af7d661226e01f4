package mcpclients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
)

// writePlan plans c's setup in root and writes it, failing the test on
// any error.
func writePlan(t *testing.T, c Client, root string, o Options) Plan {
	t.Helper()
	o.Root = root
	p := c.Plan(srv, o)
	if err := p.Write(); err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return p
}

// readJSONFile reads a JSON file the way its client does: strict JSON for
// Claude Code (whose settings allow no comments), JWCC for the others.
func readJSONFile(t *testing.T, path string, strict bool) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strict {
		if data, err = hujson.Standardize(data); err != nil {
			t.Fatalf("%s is not JWCC: %v", path, err)
		}
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", path, err, data)
	}
	return v
}

// at is the value at a dotted path of v (keys may not hold dots).
func at(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// contains reports whether list holds every one of want.
func contains(list []string, want ...string) bool {
	for _, w := range want {
		if !slices.Contains(list, w) {
			return false
		}
	}
	return true
}

// checkRules reads back every file of c's setup in root with the client's
// own format and checks that it holds the rules.
func checkRules(t *testing.T, c string, root string) {
	t.Helper()
	p := func(rel string) string { return filepath.Join(root, rel) }
	switch c {
	case "claude":
		f := readJSONFile(t, p(".claude/settings.json"), true)
		if !contains(strs(at(f, "permissions.deny")), "Bash", "Edit", "Write", "NotebookEdit", "Read(.*)", "Read(.*/**)") ||
			!contains(strs(at(f, "permissions.allow")), "mcp__litterbox") || !contains(strs(f["enabledMcpjsonServers"]), "litterbox") {
			t.Errorf("claude settings %v", f)
		}
		readJSONFile(t, p(".mcp.json"), true)
	case "opencode":
		f := readJSONFile(t, p("opencode.json"), false)
		perm := at(f, "permission").(map[string]any)
		read, _ := perm["read"].(map[string]any)
		if perm["bash"] != "deny" || perm["edit"] != "deny" || perm["grep"] != "deny" || perm["litterbox_*"] != "allow" ||
			read["**/.*"] != "deny" || read["**/.*/**"] != "deny" {
			t.Errorf("opencode permission %v", perm)
		}
	case "codex":
		var f struct {
			SandboxMode    string `toml:"sandbox_mode"`
			ApprovalPolicy string `toml:"approval_policy"`
			Features       struct {
				ShellTool *bool `toml:"shell_tool"`
			}
			Servers map[string]struct {
				Command  string
				Approval string `toml:"default_tools_approval_mode"`
			} `toml:"mcp_servers"`
		}
		data, _ := os.ReadFile(p(".codex/config.toml"))
		if _, err := toml.Decode(string(data), &f); err != nil {
			t.Fatalf("codex config is not TOML: %v\n%s", err, data)
		}
		if f.SandboxMode != "read-only" || f.ApprovalPolicy != "never" || f.Features.ShellTool == nil || *f.Features.ShellTool || f.Servers["litterbox"].Approval != "approve" {
			t.Errorf("codex config %+v:\n%s", f, data)
		}
	case "cursor":
		f := readJSONFile(t, p(".cursor/cli.json"), false)
		if !contains(strs(at(f, "permissions.deny")), "Shell(*)", "Write(**)", "Read(**/.*)") {
			t.Errorf("cursor cli.json %v", f)
		}
		if data, _ := os.ReadFile(p(".cursorignore")); !slices.Contains(strings.Split(string(data), "\n"), ".*") {
			t.Errorf(".cursorignore:\n%s", data)
		}
	case "zed":
		f := readJSONFile(t, p(".zed/settings.json"), false)
		if !contains(strs(f["private_files"]), "**/.env*", "**/.*", "**/.*/**") {
			t.Errorf("zed settings %v", f)
		}
	}
}

// Every client's rules land in files its own format reads back, holding
// the rules; a second run changes nothing and says so.
func TestPlanWritesRulesOnceReadBack(t *testing.T) {
	for _, c := range Clients {
		t.Run(c.Name, func(t *testing.T) {
			root := t.TempDir()
			first := writePlan(t, c, root, Options{})
			for _, f := range first.Files {
				if !f.Manual && !f.Changed() {
					t.Errorf("%s not written", f.Path)
				}
			}
			checkRules(t, c.Name, root)
			if c.Name == "claude" {
				if _, err := os.Stat(filepath.Join(root, ".mcp.json")); err != nil {
					t.Error(err)
				}
			}
			again := c.Plan(srv, Options{Root: root})
			for _, f := range again.Files {
				if f.Changed() {
					t.Errorf("second run would change %s:\n%s\n---\n%s", f.Path, f.Old, f.New)
				}
			}
		})
	}
}

// existingRules are project files a user already has: their own rules,
// other settings and comments must all survive, in their order.
var existingRules = map[string]map[string]string{
	"claude": {".claude/settings.json": `{
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm test)"],
    "deny": ["Read(./secrets/**)"],
    "defaultMode": "acceptEdits"
  }
}
`},
	"opencode": {"opencode.json": `{
  // my config
  "$schema": "https://opencode.ai/config.json",
  "model": "m", /* keep */
  "permission": {
    "*": "ask",
    "webfetch": "allow",
    "read": "allow",
  },
}
`},
	"codex": {".codex/config.toml": `# my settings
model = "o3"

# speed
[features]
web_search_request = true

[profiles.fast]
model = "mini"
`},
	"cursor": {
		".cursor/cli.json": `{"permissions": {"allow": ["Shell(ls)"], "deny": ["Shell(rm)"]}, "other": 1}`,
		".cursorignore":    "node_modules/\n*.log",
	},
	"zed": {".zed/settings.json": `// Zed settings
{
  "theme": "One Dark", // mine
  "private_files": ["**/*.secret"],
}
`},
}

// keeps lists what must still be in each file, in this order.
var keeps = map[string][]string{
	".claude/settings.json": {`"model": "opus"`, `"Bash(npm test)"`, `"mcp__litterbox"`, `"Read(./secrets/**)"`, `"Bash"`, `"defaultMode": "acceptEdits"`},
	"opencode.json":         {"// my config", `"model": "m", /* keep */`, `"*": "ask"`, `"webfetch": "allow"`, `"*": "allow"`, `"**/.*": "deny"`, `"bash": "deny"`, `"litterbox_*": "allow"`},
	".codex/config.toml":    {"# my settings", `model = "o3"`, `sandbox_mode = "read-only"`, "# speed", "[features]", "web_search_request = true", "shell_tool = false", "[profiles.fast]", `model = "mini"`, "[mcp_servers.litterbox]"},
	".cursor/cli.json":      {`"Shell(ls)"`, `"Shell(rm)"`, `"Shell(*)"`, `"other": 1`},
	".cursorignore":         {"node_modules/", "*.log", ".*"},
	".zed/settings.json":    {"// Zed settings", `"theme": "One Dark", // mine`, `"**/*.secret"`, `"**/.*"`, `"context_servers"`},
}

func TestPlanKeepsTheUsersSettings(t *testing.T) {
	for _, c := range Clients {
		t.Run(c.Name, func(t *testing.T) {
			root := t.TempDir()
			for rel, content := range existingRules[c.Name] {
				path := filepath.Join(root, rel)
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			p := writePlan(t, c, root, Options{})
			if len(p.Notes) != len(clientNotes[c.Name]) {
				t.Errorf("notes %q: the user's settings were taken for conflicts", p.Notes)
			}
			checkRules(t, c.Name, root)
			for rel := range existingRules[c.Name] {
				data, _ := os.ReadFile(filepath.Join(root, rel))
				last := -1
				for _, k := range keeps[rel] {
					i := strings.Index(string(data), k)
					if i <= last {
						t.Errorf("%s: %q missing or out of order:\n%s", rel, k, data)
					}
					last = i
				}
				if fi, _ := os.Stat(filepath.Join(root, rel)); fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode %v, want 0600 kept", rel, fi.Mode().Perm())
				}
			}
			for _, f := range c.Plan(srv, Options{Root: root}).Files {
				if f.Changed() {
					t.Errorf("second run would change %s:\n%s\n---\n%s", f.Path, f.Old, f.New)
				}
			}
		})
	}
}

// --allow-builtin writes the server entry and nothing else.
func TestAllowBuiltinWritesOnlyTheServerEntry(t *testing.T) {
	for _, c := range Clients {
		t.Run(c.Name, func(t *testing.T) {
			root := t.TempDir()
			p := writePlan(t, c, root, Options{AllowBuiltin: true})
			if len(p.Files) != 1 || len(p.Notes) != 0 {
				t.Fatalf("files %d, notes %q", len(p.Files), p.Notes)
			}
			var names []string
			_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					rel, _ := filepath.Rel(root, path)
					names = append(names, rel)
				}
				return err
			})
			if !slices.Equal(names, []string{c.File}) {
				t.Errorf("wrote %q, want only %s", names, c.File)
			}
			data, _ := os.ReadFile(filepath.Join(root, c.File))
			want, _, _ := c.Merge(nil, srv)
			if string(data) != string(want) {
				t.Errorf("%s holds more than the entry:\n%s", c.File, data)
			}
		})
	}
}

// A rule the user set differently is theirs: kept, reported, and the
// project is not contained.
func TestContradictingRulesAreKeptAndReported(t *testing.T) {
	cases := map[string]struct{ file, content, note string }{
		"opencode": {"opencode.json", `{"permission": {"bash": {"git *": "allow"}, "edit": "ask"}}`, `opencode.json: permission.bash is {"git *":"allow"}, not "deny"; left as it is, so OpenCode's shell stays allowed`},
		"codex":    {".codex/config.toml", "sandbox_mode = \"workspace-write\"\nfeatures = { shell_tool = true }\n", `config.toml: sandbox_mode is "workspace-write", not "read-only"; left as it is, so Codex's sandbox lets it write`},
		"claude":   {".claude/settings.json", `{"permissions": {"deny": "Bash"}}`, `settings.json: permissions.deny is "Bash", not an array; left as it is`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, _ := Lookup(name)
			root := t.TempDir()
			path := filepath.Join(root, tc.file)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			p := writePlan(t, c, root, Options{})
			if !slices.Contains(p.Notes, tc.note) {
				t.Errorf("notes %q, want %q", p.Notes, tc.note)
			}
			got := Containment(root)
			if len(got) != 1 || got[0].Contained {
				t.Errorf("containment %+v, want one uncontained finding", got)
			}
		})
	}
}

// A rules file that cannot be read safely stops everything: no file is
// written, and the error names it.
func TestBrokenRulesFileWritesNothing(t *testing.T) {
	c, _ := Lookup("claude")
	root := t.TempDir()
	settings := filepath.Join(root, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(`{"permissions": `), 0o644); err != nil {
		t.Fatal(err)
	}
	p := c.Plan(srv, Options{Root: root})
	if err := p.Write(); err == nil || !strings.Contains(err.Error(), settings) {
		t.Fatalf("err = %v, want one naming %s", err, settings)
	}
	if _, err := os.Stat(filepath.Join(root, ".mcp.json")); !os.IsNotExist(err) {
		t.Errorf(".mcp.json was written: %v", err)
	}
	if data, _ := os.ReadFile(settings); string(data) != `{"permissions": ` {
		t.Errorf("settings changed: %s", data)
	}
	for _, f := range p.Files {
		if f.Err != nil && !strings.Contains(string(f.New), `"Bash"`) {
			t.Errorf("what to add by hand: %s", f.New)
		}
	}
}

// --file sends the entry elsewhere; the rules stay in the project, and a
// rule file that is the entry's file gets both.
func TestFileMovesOnlyTheEntry(t *testing.T) {
	root, elsewhere := t.TempDir(), filepath.Join(t.TempDir(), "user.json")
	c, _ := Lookup("opencode")
	writePlan(t, c, root, Options{File: elsewhere})
	if f := readJSONFile(t, elsewhere, false); f["permission"] != nil || at(f, "mcp.litterbox") == nil {
		t.Errorf("user file %v", f)
	}
	checkRules(t, "opencode", root)
	if f := readJSONFile(t, filepath.Join(root, "opencode.json"), false); f["mcp"] != nil {
		t.Errorf("project file got the entry too: %v", f)
	}
}

// Containment: a client with a litterbox entry and its rules is
// contained; with the entry only it is not, and says what is missing; a
// client without an entry is not reported.
func TestContainment(t *testing.T) {
	contained, open := t.TempDir(), t.TempDir()
	for _, c := range Clients {
		writePlan(t, c, contained, Options{})
		if c.Name != "codex" {
			writePlan(t, c, open, Options{AllowBuiltin: true})
		}
	}
	got := Containment(contained)
	if len(got) != len(Clients) {
		t.Fatalf("findings %+v", got)
	}
	for _, f := range got {
		want := f.Client != "zed" // Zed's rules are the user's settings
		if f.Contained != want || f.Detail == "" || f.File == "" || !strings.HasPrefix(f.Fix, "litterbox mcp-config "+f.Client) && f.Client != "zed" {
			t.Errorf("contained project: %+v", f)
		}
	}
	got = Containment(open)
	if len(got) != len(Clients)-1 {
		t.Fatalf("findings %+v, want none for codex (no entry)", got)
	}
	for _, f := range got {
		if f.Contained || f.Client == "codex" || !strings.Contains(f.Fix, "litterbox mcp-config "+f.Client) {
			t.Errorf("open project: %+v", f)
		}
	}
	if got := Containment(t.TempDir()); len(got) != 0 {
		t.Errorf("empty project: %+v", got)
	}
	// Half the rules: Edit denied, Bash not.
	half := t.TempDir()
	c, _ := Lookup("claude")
	writePlan(t, c, half, Options{AllowBuiltin: true})
	if err := os.MkdirAll(filepath.Join(half, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(half, ".claude", "settings.json"), []byte(`{"permissions": {"deny": ["Edit", "Write"]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Containment(half); len(got) != 1 || got[0].Contained || !strings.Contains(got[0].Detail, "deny Bash") {
		t.Errorf("half-contained: %+v", got)
	}
}

// OpenCode's rules apply in order, the last match winning: a later "*"
// allow undoes an earlier bash deny.
func TestOpencodeRuleOrder(t *testing.T) {
	for content, want := range map[string]bool{
		`{"permission": {"bash": "deny"}}`:                        true,
		`{"permission": {"bash": "deny", "*": "allow"}}`:          false,
		`{"permission": {"*": "allow", "bash": "deny"}}`:          true,
		`{"permission": {"bash": {"*": "deny", "git *": "ask"}}}`: false,
		`{"permission": "deny"}`:                                  true,
		`{}`:                                                      false,
	} {
		missing, err := opencodeMissing([]byte(content))
		if err != nil {
			t.Fatal(err)
		}
		if got := !slices.ContainsFunc(missing, func(m string) bool { return strings.Contains(m, "bash") }); got != want {
			t.Errorf("%s: bash disabled %v, want %v", content, got, want)
		}
	}
}

// A string rule is OpenCode's {"*": rule}: written out so ours can follow.
func TestOpencodeStringRuleBecomesAnObject(t *testing.T) {
	c, _ := Lookup("opencode")
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "opencode.json"), []byte(`{"permission": "ask"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := writePlan(t, c, root, Options{})
	if len(p.Notes) != 0 {
		t.Errorf("notes %q", p.Notes)
	}
	f := readJSONFile(t, filepath.Join(root, "opencode.json"), false)
	raw, _ := json.Marshal(f["permission"])
	if !regexp.MustCompile(`^\{"\*":"ask",.*"bash":"deny"`).Match(raw) {
		t.Errorf("permission %s", raw)
	}
}

// Codex keys go where TOML reads them as meant, whatever the file looks
// like; a [features] table defined inline cannot take one and is reported.
func TestCodexRulesPlacement(t *testing.T) {
	for _, in := range []string{
		"",
		"[mcp_servers.other]\ncommand = \"o\"\n",
		"model = \"o3\"",
		"matrix = [\n  [1, 2],\n]\n[features]\nx = 1\n\n\n[y]\nz = 2\n",
		"# only a comment\n",
	} {
		out, notes, err := mergeTOMLRules([]byte(in), "config.toml", codexRules)
		if err != nil || len(notes) != 0 {
			t.Fatalf("%q: %v %q", in, err, notes)
		}
		var doc map[string]any
		if _, err := toml.Decode(string(out), &doc); err != nil {
			t.Fatalf("%q gave bad TOML: %v\n%s", in, err, out)
		}
		if missing, _ := codexMissing(out); len(missing) != 0 {
			t.Errorf("%q: missing %q:\n%s", in, missing, out)
		}
		rest := string(out)
		for _, l := range strings.SplitAfter(in, "\n") {
			i := strings.Index(rest, l)
			if i < 0 {
				t.Errorf("%q: line %q lost or moved:\n%s", in, l, out)
				break
			}
			rest = rest[i+len(l):]
		}
	}
	_, notes, err := mergeTOMLRules([]byte("features = { web_search_request = true }\n"), "config.toml", codexRules)
	if err != nil || len(notes) != 1 || !strings.Contains(notes[0], "add shell_tool = false to it by hand") {
		t.Errorf("inline features: %v %q", err, notes)
	}
}

// Comments and one-line containers survive the rules, which are indented
// like their neighbours.
func TestJSONRulesFormatting(t *testing.T) {
	in := "{\n    \"permissions\": {\"deny\": [\"X\"]}, // mine\n    \"a\": [\n        1, // one\n    ],\n}\n"
	out, notes, err := mergeJSONRules([]byte(in), "f", wantObj{
		{"permissions", wantObj{{"deny", wantSet{"Bash"}}, {"allow", wantSet{"y"}}}},
		{"b", wantVal{true, ""}},
	})
	if err != nil || len(notes) != 0 {
		t.Fatal(err, notes)
	}
	want := "{\n    \"permissions\": {\"deny\": [\"X\", \"Bash\"], \"allow\": [\"y\"]}, // mine\n    \"a\": [\n        1, // one\n    ],\n    \"b\": true\n}\n"
	if string(out) != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// --file naming the project's own file, by a relative path, still merges
// the entry and the rules into it once.
func TestFileThatIsTheRulesFile(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	c, _ := Lookup("opencode")
	p := writePlan(t, c, root, Options{File: "opencode.json"})
	if len(p.Files) != 1 {
		t.Fatalf("%d files planned for one", len(p.Files))
	}
	checkRules(t, "opencode", root)
	if f := readJSONFile(t, filepath.Join(root, "opencode.json"), false); at(f, "mcp.litterbox") == nil {
		t.Errorf("no entry: %v", f)
	}
}
