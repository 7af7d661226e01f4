// Package mcpclients writes the MCP server entry that launches `litterbox mcp`
// into the configuration file of an agent client (Claude Code, Codex CLI,
// OpenCode, Cursor, Zed), merging with what the file holds: other servers and
// settings are kept as they are, and writing twice changes nothing. Beside
// the entry it writes the client's own rules that keep its built-in shell
// and file tools off the host (rules.go), and reports which projects are
// set up that way (Containment).
package mcpclients

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// Server is the entry to write: a name and the command that starts it.
type Server struct {
	Name    string
	Command string
	Args    []string
	// ApproveTools lets the client call the server's tools without asking,
	// where the client keeps that in the entry itself (Codex:
	// default_tools_approval_mode, https://developers.openai.com/codex/config-reference).
	ApproveTools bool
}

// Client is one agent client's way of listing MCP servers.
type Client struct {
	Name string
	// File is where the client reads project servers, relative to the
	// project root.
	File string
	// Doc names the client's documentation of the format.
	Doc string
	// RepoArgs are the arguments that give the server the repository,
	// for a client that does not start it in the project's directory;
	// none where it does (the server takes the repository from its
	// working directory), so the entry holds no path of this machine.
	RepoArgs []string
	format   format
}

type format int

const (
	mcpServersJSON format = iota // {"mcpServers": {NAME: {command, args}}}
	claudeJSON                   // the same, with "type": "stdio"
	opencodeJSON                 // {"mcp": {NAME: {type: local, command: [...]}}}
	zedJSON                      // {"context_servers": {NAME: {command, args, env}}}
	codexTOML                    // [mcp_servers.NAME] command, args
)

// Clients are the supported clients, by the name mcp-config takes.
var Clients = []Client{
	{Name: "claude", File: ".mcp.json", Doc: "Claude Code project servers", format: claudeJSON},
	{Name: "codex", File: filepath.Join(".codex", "config.toml"), Doc: "Codex CLI project config (trusted projects)", format: codexTOML},
	{Name: "opencode", File: "opencode.json", Doc: "OpenCode project config", format: opencodeJSON},
	// Cursor fills ${workspaceFolder} in an entry's arguments
	// (https://cursor.com/docs/context/mcp).
	{Name: "cursor", File: filepath.Join(".cursor", "mcp.json"), Doc: "Cursor project servers", RepoArgs: []string{"--repo", "${workspaceFolder}"}, format: mcpServersJSON},
	{Name: "zed", File: filepath.Join(".zed", "settings.json"), Doc: "Zed project settings", format: zedJSON},
}

// Lookup finds a client by name.
func Lookup(name string) (Client, error) {
	for _, c := range Clients {
		if c.Name == strings.ToLower(name) {
			return c, nil
		}
	}
	names := make([]string, len(Clients))
	for i, c := range Clients {
		names[i] = c.Name
	}
	return Client{}, fmt.Errorf("unknown client %q: want one of %s", name, strings.Join(names, ", "))
}

// Snippet is the smallest whole config file holding just the entry.
func (c Client) Snippet(s Server) (string, error) {
	out, _, err := c.Merge(nil, s)
	return string(out), err
}

// Merge returns the file content with the entry added or replaced, and
// whether that changed anything. A JSON file with comments or trailing
// commas is edited in place, comments kept; content that cannot be read
// safely (broken JSON or TOML, an array) is an error, never overwritten.
func (c Client) Merge(content []byte, s Server) ([]byte, bool, error) {
	if c.format == codexTOML {
		return mergeTOML(content, s)
	}
	section, entry := c.jsonEntry(s)
	return mergeJSON(content, section, s.Name, entry, c.format == opencodeJSON)
}

func (c Client) jsonEntry(s Server) (section string, entry any) {
	args := s.Args
	if args == nil {
		args = []string{}
	}
	switch c.format {
	case claudeJSON:
		return "mcpServers", orderedEntry{{"type", "stdio"}, {"command", s.Command}, {"args", args}}
	case opencodeJSON:
		return "mcp", orderedEntry{{"type", "local"}, {"command", append([]string{s.Command}, args...)}, {"enabled", true}}
	case zedJSON:
		return "context_servers", orderedEntry{{"command", s.Command}, {"args", args}, {"env", map[string]string{}}}
	}
	return "mcpServers", orderedEntry{{"command", s.Command}, {"args", args}}
}

// WriteFile merges the entry into path (made if missing, with its parent
// directory), atomically, keeping the file's mode. It reports whether the
// file changed.
func (c Client) WriteFile(path string, s Server) (bool, error) {
	old, mode, err := readFile(path)
	if err != nil {
		return false, err
	}
	out, changed, err := c.Merge(old, s)
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if !changed {
		return false, nil
	}
	return true, writeAtomic(path, out, mode)
}

// readFile is path's content (nil when it does not exist) and the mode to
// write it back with.
func readFile(path string) ([]byte, fs.FileMode, error) {
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0o644, nil
	case err != nil:
		return nil, 0, err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return data, mode, nil
}

// writeAtomic replaces path with data (making its directory), so a reader
// sees the old file or the new one, never half of it.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// orderedEntry marshals as a JSON object with its keys in this order.
type orderedEntry []struct {
	k string
	v any
}

func (o orderedEntry) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(kv.k)
		v, err := json.Marshal(kv.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// object is a JSON object read with its keys in file order.
type object struct {
	keys []string
	vals map[string]json.RawMessage
}

func parseObject(data []byte) (*object, error) {
	o := &object{vals: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if _, dup := o.vals[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.vals[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("data after the object")
	}
	return o, nil
}

func (o *object) set(key string, v json.RawMessage) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

func (o *object) marshal() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteByte(':')
		b.Write(o.vals[k])
	}
	b.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, b.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func mergeJSON(content []byte, section, name string, entry any, schema bool) ([]byte, bool, error) {
	top, err := parseObject(content)
	if err != nil {
		return mergeJWCC(content, section, name, entry)
	}
	servers, err := parseObject(top.vals[section])
	if top.vals[section] != nil && err != nil {
		return nil, false, fmt.Errorf("%q is not a JSON object; edit it by hand", section)
	}
	if servers == nil {
		servers = &object{vals: map[string]json.RawMessage{}}
	}
	want, err := json.Marshal(entry)
	if err != nil {
		return nil, false, err
	}
	if old, ok := servers.vals[name]; ok && sameJSON(old, want) {
		return content, false, nil
	}
	servers.set(name, want)
	sec, err := servers.marshal()
	if err != nil {
		return nil, false, err
	}
	if schema && len(top.keys) == 0 {
		top.set("$schema", json.RawMessage(`"https://opencode.ai/config.json"`))
	}
	top.set(section, bytes.TrimSpace(sec))
	out, err := top.marshal()
	return out, true, err
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// inlineServers matches `mcp_servers = {...}` (or a dotted key under it) at
// the top level.
var inlineServers = regexp.MustCompile(`^\s*"?mcp_servers"?\s*(=|\.)`)

// tableHeader matches any TOML table or array-of-tables header line.
var tableHeader = regexp.MustCompile(`^\s*\[`)

// mergeTOML replaces the [mcp_servers.NAME] table, or appends it, editing
// the text so every other line (comments included) stays as it was.
func mergeTOML(content []byte, s Server) ([]byte, bool, error) {
	var existing map[string]any
	if _, err := toml.Decode(string(content), &existing); err != nil {
		return nil, false, fmt.Errorf("cannot merge into it: %v", err)
	}
	var block strings.Builder
	fmt.Fprintf(&block, "[mcp_servers.%s]\n", tomlKey(s.Name))
	fmt.Fprintf(&block, "command = %s\n", tomlString(s.Command))
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = tomlString(a)
	}
	fmt.Fprintf(&block, "args = [%s]\n", strings.Join(args, ", "))
	if s.ApproveTools {
		block.WriteString("default_tools_approval_mode = \"approve\"\n")
	}

	lines := strings.SplitAfter(string(content), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	header := regexp.MustCompile(`^\s*\[\s*mcp_servers\s*\.\s*(` + regexp.QuoteMeta(s.Name) + `|"` + regexp.QuoteMeta(s.Name) + `")\s*\]\s*(#.*)?$`)
	start := slices.IndexFunc(lines, func(l string) bool { return header.MatchString(strings.TrimRight(l, "\r\n")) })
	// Servers written as inline tables or dotted keys cannot take a table
	// of their own without breaking the file: those are edited by hand.
	if servers, ok := existing["mcp_servers"].(map[string]any); ok {
		if _, defined := servers[s.Name]; defined && start < 0 {
			return nil, false, fmt.Errorf("mcp_servers.%s is defined inline, not as a [mcp_servers.%s] table; edit it by hand", s.Name, s.Name)
		}
	}
	if slices.ContainsFunc(lines, func(l string) bool { return inlineServers.MatchString(l) }) {
		return nil, false, errors.New("mcp_servers is an inline table; add the server to it by hand")
	}
	var out strings.Builder
	if start < 0 {
		out.WriteString(string(content))
		if len(content) > 0 && !bytes.HasSuffix(content, []byte("\n")) {
			out.WriteByte('\n')
		}
		if len(content) > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(block.String())
		return []byte(out.String()), true, nil
	}
	end := start + 1
	for end < len(lines) && !tableHeader.MatchString(lines[end]) {
		end++
	}
	// Keep the blank lines that separated the table from the next one.
	body := end
	for body > start+1 && strings.TrimSpace(lines[body-1]) == "" {
		body--
	}
	old := strings.Join(lines[start:body], "")
	if old == block.String() {
		return content, false, nil
	}
	out.WriteString(strings.Join(lines[:start], ""))
	out.WriteString(block.String())
	out.WriteString(strings.Join(lines[body:], ""))
	return []byte(out.String()), true, nil
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKey.MatchString(k) {
		return k
	}
	return tomlString(k)
}

func tomlString(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a valid TOML basic string
	return string(b)
}
