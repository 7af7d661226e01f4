package mcpclients

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/tailscale/hujson"
)

// Finding is whether one client set up in a project keeps its own tools
// off the host.
type Finding struct {
	// Client is the client's name, as mcp-config takes it.
	Client string
	// File is the file holding the client's rules: relative to the root
	// for a project file (Zed's are in the user's settings).
	File string
	// Contained: the client's rules deny its built-in shell and file
	// writes.
	Contained bool
	// Detail says so in one line, or what is missing.
	Detail string
	// Fix is the command that writes the rules.
	Fix string
}

// Containment checks each client whose project file in root has a
// litterbox server entry: whether its own rules there deny its built-in
// shell and file-writing tools.
func Containment(root string) []Finding {
	var out []Finding
	for _, c := range Clients {
		if !c.hasLitterbox(root) {
			continue
		}
		f := Finding{Client: c.Name, Fix: "litterbox mcp-config " + c.Name + " --write"}
		f.File, f.Contained, f.Detail = c.contained(root)
		if c.Name == "zed" {
			f.Fix = "add the agent profile printed by litterbox mcp-config zed to " + f.File + ", and pick it in the Agent Panel"
		}
		out = append(out, f)
	}
	return out
}

// hasLitterbox reports whether the client's project file lists a server
// that runs litterbox mcp, under any name.
func (c Client) hasLitterbox(root string) bool {
	data, err := os.ReadFile(filepath.Join(root, c.File))
	if err != nil {
		return false
	}
	for name, cmd := range c.serverCommands(data) {
		if isLitterbox(name, cmd) {
			return true
		}
	}
	return false
}

// serverCommands are the command lines of the servers listed in data, by
// name.
func (c Client) serverCommands(data []byte) map[string][]string {
	var servers map[string]struct {
		Command any      `json:"command" toml:"command"`
		Args    []string `json:"args" toml:"args"`
	}
	if c.format == codexTOML {
		var f struct {
			Servers map[string]struct {
				Command string
				Args    []string
			} `toml:"mcp_servers"`
		}
		if _, err := toml.Decode(string(data), &f); err != nil {
			return nil
		}
		out := map[string][]string{}
		for name, s := range f.Servers {
			out[name] = append([]string{s.Command}, s.Args...)
		}
		return out
	}
	section, _ := c.jsonEntry(Server{})
	if readJSONC(data, section, &servers) != nil {
		return nil
	}
	out := map[string][]string{}
	for name, s := range servers {
		switch cmd := s.Command.(type) {
		case string:
			out[name] = append([]string{cmd}, s.Args...)
		case []any: // OpenCode: the command and its arguments
			for _, a := range cmd {
				if s, ok := a.(string); ok {
					out[name] = append(out[name], s)
				}
			}
		}
	}
	return out
}

// readJSONC reads member key of a JSON or JWCC file into v (the whole
// file when key is "").
func readJSONC(data []byte, key string, v any) error {
	std, err := hujson.Standardize(append([]byte(nil), data...))
	if err != nil {
		return err
	}
	if key == "" {
		return json.Unmarshal(std, v)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(std, &top); err != nil {
		return err
	}
	if top[key] == nil {
		return nil
	}
	return json.Unmarshal(top[key], v)
}

// contained checks the client's rule file: the file, the verdict and a
// one-line detail.
func (c Client) contained(root string) (string, bool, string) {
	if c.Name == "zed" {
		return zedUserSettings(), false, "Zed takes its agent's tool rules only from user settings, which Litterbox does not check"
	}
	r := ruleFiles[c.Name][0]
	data, err := os.ReadFile(filepath.Join(root, r.file))
	if err != nil {
		return r.file, false, fmt.Sprintf("no %s: %s's own shell and file tools work on the host", r.file, displayNames[c.Name])
	}
	var missing []string
	switch c.Name {
	case "claude":
		missing, err = claudeMissing(data, root)
	case "opencode":
		missing, err = opencodeMissing(data)
	case "codex":
		missing, err = codexMissing(data)
	case "cursor":
		missing, err = cursorMissing(data)
	}
	switch {
	case err != nil:
		return r.file, false, fmt.Sprintf("cannot read %s: %v", r.file, err)
	case len(missing) > 0:
		return r.file, false, fmt.Sprintf("%s does not %s", r.file, strings.Join(missing, ", "))
	case c.Name == "cursor":
		return r.file, true, r.file + " denies cursor-agent's shell and writes (the Cursor editor's agent does not read it)"
	}
	return r.file, true, r.file + " denies " + displayNames[c.Name] + "'s own shell and file writes"
}

// displayNames are the clients' own names, for details.
var displayNames = map[string]string{"claude": "Claude Code", "codex": "Codex", "opencode": "OpenCode", "cursor": "Cursor", "zed": "Zed"}

// claudeMissing lists the deny rules Claude Code lacks, from the project's
// shared and local settings (their lists add up).
func claudeMissing(shared []byte, root string) ([]string, error) {
	var deny []string
	for i, data := range [][]byte{shared, readOptional(filepath.Join(root, ".claude", "settings.local.json"))} {
		var f struct {
			Permissions struct{ Deny []string }
		}
		if err := readJSONC(data, "", &f); err != nil && i == 0 {
			return nil, err
		}
		deny = append(deny, f.Permissions.Deny...)
	}
	var missing []string
	for _, t := range []string{"Bash", "Edit", "Write"} {
		if !slices.Contains(deny, t) && !slices.Contains(deny, t+"(*)") {
			missing = append(missing, "deny "+t)
		}
	}
	return missing, nil
}

func readOptional(path string) []byte {
	data, _ := os.ReadFile(path)
	if len(data) == 0 {
		return []byte("{}")
	}
	return data
}

// opencodeMissing evaluates OpenCode's permission rules the way it does
// (PermissionNext.fromConfig and disabled, packages/opencode/src/permission/next.ts):
// a tool is removed when the last rule whose permission matches it is
// pattern "*" deny.
func opencodeMissing(data []byte) ([]string, error) {
	var raw json.RawMessage
	if err := readJSONC(data, "permission", &raw); err != nil {
		return nil, err
	}
	rules, err := opencodeRuleset(raw)
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, tool := range []string{"bash", "edit"} {
		if !opencodeDisabled(tool, rules) {
			missing = append(missing, `set permission.`+tool+` to "deny" (last)`)
		}
	}
	return missing, nil
}

type opencodeRule struct{ permission, pattern, action string }

// opencodeRuleset is the permission config as rules, in key order: a
// string is pattern "*", an object one rule per pattern.
func opencodeRuleset(raw json.RawMessage) ([]opencodeRule, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	var all string
	if json.Unmarshal(raw, &all) == nil {
		return []opencodeRule{{"*", "*", all}}, nil
	}
	top, err := parseObject(raw)
	if err != nil {
		return nil, err
	}
	var rules []opencodeRule
	for _, k := range top.keys {
		if json.Unmarshal(top.vals[k], &all) == nil {
			rules = append(rules, opencodeRule{k, "*", all})
			continue
		}
		obj, err := parseObject(top.vals[k])
		if err != nil {
			return nil, fmt.Errorf("permission.%s: %v", k, err)
		}
		for _, p := range obj.keys {
			var action string
			_ = json.Unmarshal(obj.vals[p], &action)
			rules = append(rules, opencodeRule{k, p, action})
		}
	}
	return rules, nil
}

func opencodeDisabled(tool string, rules []opencodeRule) bool {
	for i := len(rules) - 1; i >= 0; i-- {
		if wildcardMatch(tool, rules[i].permission) {
			return rules[i].pattern == "*" && rules[i].action == "deny"
		}
	}
	return false
}

// wildcardMatch is OpenCode's simple wildcard for permission names: *
// matches any run of characters, ? one.
func wildcardMatch(s, pattern string) bool {
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern)) + "$"
	ok, _ := regexp.MatchString(re, s)
	return ok
}

// codexMissing lists the Codex settings that are not as the rules set them.
func codexMissing(data []byte) ([]string, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		return nil, err
	}
	var missing []string
	for _, r := range codexRules {
		if v, _ := lookupTOML(doc, r.table, r.key); v != r.value {
			missing = append(missing, "set "+dotted(r)+" = "+r.text)
		}
	}
	return missing, nil
}

// cursorMissing lists the deny rules cursor-agent lacks.
func cursorMissing(data []byte) ([]string, error) {
	var f struct {
		Permissions struct{ Deny []string }
	}
	if err := readJSONC(data, "", &f); err != nil {
		return nil, err
	}
	var missing []string
	for _, alts := range [][]string{{"Shell(*)", "Shell(**)"}, {"Write(**)", "Write(*)"}} {
		if !slices.ContainsFunc(alts, func(r string) bool { return slices.Contains(f.Permissions.Deny, r) }) {
			missing = append(missing, "deny "+alts[0])
		}
	}
	return missing, nil
}
