package mcpclients

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
)

// The agent should act only through Litterbox's tools: its client's own
// shell and file-writing tools work on the host, outside every sandbox.
// Each client can be told so in its own project files, to the extent its
// documentation says it enforces; what it cannot enforce is a note, never
// a rule that only looks like one.

// ToolNames are the tools `litterbox mcp` serves (package mcp). Zed needs
// them by name; a test in cmd/litterbox keeps the list in step with mcp.
var ToolNames = []string{
	"sandbox-create", "sandbox-fork", "sandbox-list", "bash", "read", "write", "patch", "edit",
	"ls", "glob", "grep", "sandbox-milestone", "sandbox-diff", "sandbox-ports", "sandbox-service", "sandbox-ready", "sandbox-sync",
}

// ruleFile is one file a client reads its own rules from.
type ruleFile struct {
	// file is relative to the project root.
	file string
	// doc heads the file when it is printed instead of written.
	doc string
	// what the rules do, for "Wrote ... to FILE".
	what string
	// json is the content a JSON (or JWCC) file must hold; toml, for a
	// Codex config file; lines, for an ignore file (comment first).
	json  func(s Server) wantObj
	toml  []tomlRule
	lines []string
	// manual rules live in a file mcp-config never writes (Zed's user
	// settings): they are printed for the user to add.
	manual bool
}

// toolPrefix is the server name as clients put it in tool names: the
// characters other than letters, digits, _ and - become _ (Claude Code's
// mcp__server__tool, OpenCode's server_tool).
func toolPrefix(name string) string {
	return regexp.MustCompile(`[^A-Za-z0-9_-]`).ReplaceAllString(name, "_")
}

// Claude Code: project settings in .claude/settings.json (strict JSON).
// https://code.claude.com/docs/en/permissions: a deny rule naming a bare
// tool removes it from Claude's context (Monitor and PowerShell run
// commands too, https://code.claude.com/docs/en/tools-reference); "Edit"
// covers every built-in tool
// that edits files, a bare "Write" is matched at the tool level; Read deny
// rules use gitignore patterns, a bare name matching at any depth and a
// single-directory pattern like ".git/**" matching that directory at any
// depth in deny rules, and they also block Edit and Write there, Grep and
// Glob best-effort; "mcp__server" allows every tool of the server. MultiEdit
// is left out: Claude Code no longer has it, and a deny rule naming an
// unknown tool is a startup warning. https://code.claude.com/docs/en/mcp:
// enabledMcpjsonServers approves the project's .mcp.json server, once the
// workspace is trusted.
func claudeRules(s Server) wantObj {
	return wantObj{
		{"permissions", wantObj{
			{"deny", wantSet{"Bash", "Monitor", "PowerShell", "Edit", "Write", "NotebookEdit", "Read(.*)", "Read(.*/**)"}},
			{"allow", wantSet{"mcp__" + toolPrefix(s.Name)}},
		}},
		{"enabledMcpjsonServers", wantSet{s.Name}},
	}
}

// OpenCode: opencode.json (JSONC), "permission", whose rules apply in key
// order, the last match winning (so ours, appended, win; a key the user
// already set is theirs). https://opencode.ai/docs/permissions: "edit"
// covers edit, write, patch and multiedit; "read" matches the file path
// (absolute, packages/opencode/src/tool/read.ts). A tool whose last rule is
// pattern "*" deny is removed (PermissionNext.disabled in
// packages/opencode/src/permission/next.ts). grep matches its regex, not a
// path, and searches hidden files (ripgrep --hidden): it cannot be kept
// off .env, so it is denied whole; Litterbox's grep takes its place.
// https://opencode.ai/docs/mcp-servers: MCP tools are named server_tool.
// The read patterns hold under both of OpenCode's wildcard forms (* across
// "/" or not): a hidden file, and anything under a hidden directory.
func opencodeRules(s Server) wantObj {
	shell := "OpenCode's shell stays allowed"
	edits := "OpenCode's file edits stay allowed"
	return wantObj{{"permission", wantRules{
		{"bash", wantVal{"deny", shell}},
		{"edit", wantVal{"deny", edits}},
		{"grep", wantVal{"deny", "OpenCode's grep can still show lines of hidden files"}},
		{"read", wantRules{
			{"**/.*", wantVal{"deny", "OpenCode can still read hidden files"}},
			{"**/.*/**", wantVal{"deny", "OpenCode can still read hidden directories"}},
		}},
		{toolPrefix(s.Name) + "_*", wantVal{"allow", "OpenCode asks before each Litterbox call"}},
	}}}
}

// Cursor's agent CLI: .cursor/cli.json, permissions.allow and .deny (deny
// wins). https://cursor.com/docs/cli/reference/permissions: Shell(command
// base), Read and Write(path glob); only permissions are read from the
// project file. Both lists are written: the global config requires them.
func cursorCLIRules(Server) wantObj {
	return wantObj{{"permissions", wantObj{
		{"allow", wantSet{}},
		{"deny", wantSet{"Shell(*)", "Write(**)", "Write(**/.*)", "Write(**/.*/**)", "Read(**/.*)", "Read(**/.*/**)"}},
	}}}
}

// cursorIgnore is for the editor's agent, which does not read cli.json.
// https://cursor.com/docs/context/ignore-files: Agent, Tab, Inline Edit and
// @ mentions cannot reach ignored files (gitignore syntax); the terminal and
// MCP tools can.
var cursorIgnore = []string{
	"# Litterbox: hidden files (.env, .git, ...) stay out of Cursor's agent, as they do of Litterbox's tools.",
	".*",
}

// Zed: project settings (.zed/settings.json) may set private_files
// (WorktreeSettingsContent, flattened into ProjectSettingsContent in
// zed-industries/zed crates/settings_content/src/project.rs), and the
// agent's read_file, list_directory and grep tools refuse a private path
// ("Cannot read file because its path matches the worktree `private_files`
// setting", crates/agent/src/tools). Project settings cannot set agent
// settings: ProjectSettingsContent has no "agent". Zed's defaults already
// make .env* private and exclude .git; older Zed replaced the default list
// instead of extending it, so the defaults are repeated.
func zedProjectRules(Server) wantObj {
	return wantObj{{"private_files", wantSet{"**/.env*", "**/*.pem", "**/*.key", "**/*.cert", "**/*.crt", "**/secrets.yml", "**/.*", "**/.*/**"}}}
}

// zedUserRules are for the user's own settings, the only place Zed reads
// agent profiles and tool permissions from. https://zed.dev/docs/ai/agent-profiles:
// a profile lists the built-in tools it enables and, per context server,
// the MCP tools; https://zed.dev/docs/ai/tool-permissions: MCP tools are
// mcp:<server>:<tool>, and a tool default of "allow" needs no confirmation.
func zedUserRules(s Server) wantObj {
	enabled := make(wantObj, len(ToolNames))
	allowed := make(wantObj, len(ToolNames))
	for i, t := range ToolNames {
		enabled[i] = wantMember{t, wantVal{true, ""}}
		allowed[i] = wantMember{"mcp:" + s.Name + ":" + t, wantObj{{"default", wantVal{"allow", ""}}}}
	}
	tools := wantObj{}
	for _, t := range []string{"read_file", "grep", "find_path", "list_directory", "diagnostics", "thinking", "now"} {
		tools = append(tools, wantMember{t, wantVal{true, ""}})
	}
	for _, t := range []string{"terminal", "edit_file", "create_directory", "copy_path", "move_path", "delete_path", "save_file", "restore_file_from_disk", "open"} {
		tools = append(tools, wantMember{t, wantVal{false, ""}})
	}
	return wantObj{{"agent", wantObj{
		{"profiles", wantObj{{"litterbox", wantObj{
			{"name", wantVal{"Litterbox", ""}},
			{"tools", tools},
			{"enable_all_context_servers", wantVal{false, ""}},
			{"context_servers", wantObj{{s.Name, wantObj{{"tools", enabled}}}}},
		}}}},
		{"tool_permissions", wantObj{{"tools", allowed}}},
	}}}
}

// zedUserSettings is where Zed keeps the user's settings, for the note
// that names it (zed's paths: ~/.config/zed, $XDG_CONFIG_HOME/zed on
// Linux, %APPDATA%\Zed on Windows).
func zedUserSettings() string {
	switch {
	case runtime.GOOS == "windows" && os.Getenv("APPDATA") != "":
		return filepath.Join(os.Getenv("APPDATA"), "Zed", "settings.json")
	case runtime.GOOS == "linux" && os.Getenv("XDG_CONFIG_HOME") != "":
		return filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "zed", "settings.json")
	}
	return "~/.config/zed/settings.json"
}

// ruleFiles are the files that keep each client's own tools out, by client.
var ruleFiles = map[string][]ruleFile{
	"claude": {{
		file: filepath.Join(".claude", "settings.json"), doc: "Claude Code project settings",
		what: "Claude Code permissions (its shell and file-editing tools and reads of hidden files denied, Litterbox's tools allowed)",
		json: claudeRules,
	}},
	"codex": {{
		file: filepath.Join(".codex", "config.toml"), doc: "Codex CLI project config (trusted projects)",
		what: "Codex settings (its shell off, its sandbox read-only, no approvals)",
		toml: codexRules,
	}},
	"opencode": {{
		file: "opencode.json", doc: "OpenCode project config",
		what: "OpenCode permissions (its bash, edit and grep tools and reads of hidden files denied, Litterbox's tools allowed)",
		json: opencodeRules,
	}},
	"cursor": {{
		file: filepath.Join(".cursor", "cli.json"), doc: "Cursor agent CLI project permissions",
		what: "Cursor agent CLI permissions (its shell, writes and reads of hidden files denied)",
		json: cursorCLIRules,
	}, {
		file: ".cursorignore", doc: "Cursor ignore file",
		what:  "Cursor ignore rules (hidden files kept from its agent)",
		lines: cursorIgnore,
	}},
	"zed": {{
		file: filepath.Join(".zed", "settings.json"), doc: "Zed project settings",
		what: "Zed private files (hidden files kept from its agent's read tools)",
		json: zedProjectRules,
	}, {
		doc:    "Zed user settings (a Litterbox agent profile)",
		what:   "a Litterbox agent profile (Zed's terminal and edit tools off, Litterbox's tools on and allowed)",
		json:   zedUserRules,
		manual: true,
	}},
}

// clientNotes say what a client cannot be made to enforce from its project
// files; mcp-config prints them, each as a "note:" line.
var clientNotes = map[string][]string{
	"codex": {
		"Codex reads .codex/config.toml only in projects you trust (and a --profile or -c/--sandbox/-a flag overrides it).",
		"Codex cannot deny reads by path: its read-only sandbox stops writes, not reads of .env or .git.",
		`approval_policy = "never" also refuses, without asking, other MCP servers' tool calls that would need approval.`,
	},
	"cursor": {
		"the Cursor editor's agent does not read .cursor/cli.json: nothing in the project can deny its terminal or edits, so keep its auto-run off; .cursorignore keeps hidden files from it, but not from its terminal or MCP tools.",
		"Cursor's CLI permissions document no rule for MCP tools: cursor-agent asks before Litterbox's tools until you approve them.",
	},
	"zed": {
		fmt.Sprintf("Zed reads agent profiles and tool permissions only from your user settings, not from .zed/settings.json: add the Litterbox profile printed here to %s and pick it in the Agent Panel; mcp-config never writes that file.", zedUserSettings()),
	},
}
