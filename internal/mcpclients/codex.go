package mcpclients

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// tomlRule is a key a Codex config file must set: table "" is the top
// level.
type tomlRule struct {
	table, key string
	// value as TOML text, and as decoded, to compare with the user's.
	text   string
	value  any
	unless string
}

// Codex CLI: .codex/config.toml, read in trusted projects; a project file
// may set these keys (https://developers.openai.com/codex/config-reference
// lists the few it may not). [features] shell_tool = false removes the
// shell tool, "useful for MCP-only operation" (openai/codex#6481,
// codex-rs/core/src/features.rs). The read-only sandbox keeps the file
// edits Codex still has (apply_patch) from writing, and approval_policy
// "never" refuses them instead of asking you to let them through
// (https://developers.openai.com/codex/agent-approvals-security). Nothing
// denies reads by path: a note says so.
var codexRules = []tomlRule{
	{"", "sandbox_mode", `"read-only"`, "read-only", "Codex's sandbox lets it write"},
	{"", "approval_policy", `"never"`, "never", "Codex can ask you to let its edits through"},
	{"features", "shell_tool", "false", false, "Codex keeps its shell"},
}

// codexComment heads the top-level keys mcp-config adds, saying why.
const codexComment = "# Litterbox: Codex's own shell is off and its sandbox read-only; the agent works through Litterbox's MCP tools."

// strictHeader matches a TOML table header line and nothing else (an
// array of arrays starting a line does not match).
var strictHeader = regexp.MustCompile(`^\s*\[\[?\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+)(\s*\.\s*("[^"]*"|'[^']*'|[A-Za-z0-9_-]+))*\s*\]\]?\s*(#.*)?$`)

// mergeTOMLRules sets each rule's key that content does not set, editing
// the text so every other line stays as it was; a key the user set
// differently is left and reported.
func mergeTOMLRules(content []byte, file string, rules []tomlRule) ([]byte, []string, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(content), &doc); err != nil {
		return nil, nil, fmt.Errorf("cannot merge into it: %v", err)
	}
	lines := splitLines(string(content))
	var top, conflicts []string
	for _, r := range rules {
		cur, set := lookupTOML(doc, r.table, r.key)
		switch {
		case set && reflect.DeepEqual(cur, r.value):
		case set:
			conflicts = append(conflicts, fmt.Sprintf("%s: %s is %s, not %s; left as it is, so %s", file, dotted(r), tomlText(cur), r.text, r.unless))
		case r.table == "":
			top = append(top, r.key+" = "+r.text+"\n")
		default:
			var ok bool
			if lines, ok = addTableKey(lines, doc, r); !ok {
				conflicts = append(conflicts, fmt.Sprintf("%s: %s is not a [%s] table; add %s = %s to it by hand, or %s", file, r.table, r.table, r.key, r.text, r.unless))
			}
		}
	}
	if len(top) > 0 {
		lines = insertTopKeys(lines, append([]string{codexComment + "\n"}, top...))
	}
	out := []byte(strings.Join(lines, ""))
	if err := checkTOMLRules(out, rules, conflicts); err != nil {
		return nil, nil, err
	}
	return out, conflicts, nil
}

// tomlText writes a decoded value back as TOML, for a note.
func tomlText(v any) string {
	if s, ok := v.(string); ok {
		return tomlString(s)
	}
	return fmt.Sprint(v)
}

func dotted(r tomlRule) string {
	if r.table == "" {
		return r.key
	}
	return r.table + "." + r.key
}

// lookupTOML is doc's value at table.key (key at the top level when table
// is "").
func lookupTOML(doc map[string]any, table, key string) (any, bool) {
	if table != "" {
		t, ok := doc[table].(map[string]any)
		if !ok {
			return nil, false
		}
		doc = t
	}
	v, ok := doc[key]
	return v, ok
}

// splitLines splits s after each newline, the last line ending in one.
func splitLines(s string) []string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	lines := strings.SplitAfter(s, "\n")
	return lines[:len(lines)-1]
}

// addTableKey puts key = value at the end of the [table] table's own
// lines, or in a new [table] at the end of the file; it cannot when table
// is defined some other way (inline, or by dotted keys).
func addTableKey(lines []string, doc map[string]any, r tomlRule) ([]string, bool) {
	line := r.key + " = " + r.text + "\n"
	h := slices.IndexFunc(lines, func(l string) bool { return isHeader(l, r.table) })
	if h < 0 {
		if _, defined := doc[r.table]; defined {
			return lines, false
		}
		if len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) != "" {
			lines = append(lines, "\n")
		}
		return append(lines, "["+r.table+"]\n", line), true
	}
	end := h + 1
	for end < len(lines) && !strictHeader.MatchString(strings.TrimRight(lines[end], "\r\n")) {
		end++
	}
	for end > h+1 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	return slices.Insert(lines, end, line), true
}

// isHeader reports whether l is the header [table] (a single bare key).
func isHeader(l, table string) bool {
	m := strictHeader.FindStringSubmatch(strings.TrimRight(l, "\r\n"))
	return m != nil && !strings.Contains(m[0], "[[") && strings.Trim(m[1], `"'`) == table && m[2] == ""
}

// insertTopKeys puts block after the file's top-level keys: before the
// first table header and the comments and blank lines leading up to it.
func insertTopKeys(lines, block []string) []string {
	pos := slices.IndexFunc(lines, func(l string) bool { return strictHeader.MatchString(strings.TrimRight(l, "\r\n")) })
	if pos < 0 {
		pos = len(lines)
	}
	for pos > 0 {
		prev := strings.TrimSpace(lines[pos-1])
		if prev != "" && !strings.HasPrefix(prev, "#") {
			break
		}
		pos--
	}
	// A blank line on each side, unless there is one already.
	if pos > 0 && strings.TrimSpace(lines[pos-1]) != "" {
		block = append([]string{"\n"}, block...)
	}
	if pos < len(lines) && strings.TrimSpace(lines[pos]) != "" {
		block = append(block, "\n")
	}
	return slices.Insert(lines, pos, block...)
}

// checkTOMLRules reads out back, as Codex would: it must still be TOML
// and set every rule that was not left as a conflict. A key inserted in a
// place TOML reads differently (inside a multi-line string, say) is
// caught here, and nothing is written.
func checkTOMLRules(out []byte, rules []tomlRule, conflicts []string) error {
	var doc map[string]any
	if _, err := toml.Decode(string(out), &doc); err != nil {
		return fmt.Errorf("cannot add the rules safely (%v); add them by hand", err)
	}
	for _, r := range rules {
		if v, _ := lookupTOML(doc, r.table, r.key); !reflect.DeepEqual(v, r.value) && !mentions(conflicts, dotted(r)) && !mentions(conflicts, r.table+" is not") {
			return errors.New("cannot add the rules safely; add them by hand")
		}
	}
	return nil
}

func mentions(notes []string, s string) bool {
	return slices.ContainsFunc(notes, func(n string) bool { return strings.Contains(n, ": "+s) })
}
