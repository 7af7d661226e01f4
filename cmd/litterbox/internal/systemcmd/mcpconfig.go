package systemcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/mcpclients"
	"github.com/litterbox-dev/litterbox/mcp"
)

// mcpConfigOptions are what mcp-config was asked.
type mcpConfigOptions struct {
	Client, File, Name string
	Sandboxes          []string
	Write, All         bool
	// AllowBuiltin leaves the client's own tools alone: only the server
	// entry is written.
	AllowBuiltin bool
}

func NewMCPConfigCommand(p *cli.Program) *cobra.Command {
	var o mcpConfigOptions
	cmd := &cobra.Command{
		Use:   "mcp-config CLIENT",
		Short: "Print (or --write) the MCP server entry, and the rules keeping the agent inside, for claude, codex, opencode, cursor or zed",
		Long: `Print the MCP server entry that starts 'litterbox mcp' for this repository, in
the format of an agent client, or with --write merge it into the client's
project config file: other servers and settings are kept, and writing twice
changes nothing. The entry runs "litterbox" from PATH, and the server takes
the repository from the directory the client starts it in (Cursor, which
does not, is given --repo ${workspaceFolder}): no path of this machine is
in it, so a committed file works in every clone, on every machine.

  claude    .mcp.json               {"mcpServers": {...}}
  codex     .codex/config.toml      [mcp_servers.litterbox] (trusted projects)
  opencode  opencode.json           {"mcp": {... "type": "local"}}
  cursor    .cursor/mcp.json        {"mcpServers": {...}}
  zed       .zed/settings.json      {"context_servers": {...}}

The agent should act only through Litterbox's tools, so beside the entry
mcp-config writes the client's own rules, in its own project files, denying
its built-in shell and file-writing tools and its reads of hidden files
(.env, .git), and allowing Litterbox's tools without a prompt, as far as
the client can enforce that:

  claude    .claude/settings.json   permissions.deny and .allow, enabledMcpjsonServers
  codex     .codex/config.toml      [features] shell_tool = false, sandbox_mode =
                                    "read-only", approval_policy = "never"
  opencode  opencode.json           permission: bash, edit, grep and hidden reads denied
  cursor    .cursor/cli.json        permissions.deny (cursor-agent), and .cursorignore
  zed       .zed/settings.json      private_files; the agent profile goes in your user
                                    settings, printed for you (never written)

Rules are added after the user's own, which are never removed or reordered;
one that contradicts them is kept and reported. What a client cannot be made
to enforce is said on a "note:" line. --allow-builtin writes the server entry
only, leaving the client's own tools as they are.

Without --write every file is printed, each after a "#" line on stderr
naming it: the server entry's file on stdout, alone, so that
'mcp-config claude > .mcp.json' writes one valid file, and the others on
stderr. A JSON file with comments or trailing commas is edited in
place, comments kept; a file that cannot be read safely is not rewritten,
nor is any other: what to add is printed for you to add by hand.

The server acts only on the sandboxes it creates; --sandbox NAME (repeatable)
adds existing ones to the entry's arguments, so a client that starts the
server again (every client does, per session) takes up the same sandboxes,
and --all-sandboxes lets it act on all of them. Each client keeps the
arguments in its entry ("args"; codex: args = [...]; zed: "command"."args").
--file writes the entry elsewhere (your user-wide config, say); the rules
stay in the project.`,
		Example: `  litterbox mcp-config claude
  litterbox mcp-config codex --write
  litterbox mcp-config opencode --write --allow-builtin
  litterbox mcp-config zed --write --file ~/.config/zed/settings.json`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"claude", "codex", "opencode", "cursor", "zed"},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Client = args[0]
			return runMCPConfig(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVar(&o.Write, "write", false, "merge the entry, and the client's own rules, into its files")
	cmd.Flags().StringVar(&o.File, "file", "", "config file to write the entry to instead of the client's project file (the rules stay in the project)")
	cmd.Flags().StringVar(&o.Name, "name", "litterbox", "server name in the client's config")
	cmd.Flags().StringArrayVar(&o.Sandboxes, "sandbox", nil, "an existing sandbox the server may act on (repeatable)")
	cmd.Flags().BoolVar(&o.All, "all-sandboxes", false, "let the server act on every sandbox of the repository")
	cmd.Flags().BoolVar(&o.AllowBuiltin, "allow-builtin", false, "write the server entry only, leaving the client's own shell and file tools allowed")
	return cmd
}

// runMCPConfig prints the client's server entry and the rules keeping its
// own tools off the host, or merges them into the client's files.
func runMCPConfig(ctx context.Context, e *cli.Env, o mcpConfigOptions) error {
	client, err := mcpclients.Lookup(o.Client)
	if err != nil {
		return cli.UsageError{Err: err}
	}
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	srv, err := serverEntry(e, o, client)
	if err != nil {
		return err
	}
	opts := mcpclients.Options{Root: m.Repo.Root, File: o.File, AllowBuiltin: o.AllowBuiltin}
	if !o.Write {
		printPlan(e, client.Snippets(srv, opts))
	} else if err := writePlan(e, client.Plan(srv, opts)); err != nil {
		return err
	}
	if note := onPath(); note != "" {
		printNotes(e, []string{note})
	}
	return nil
}

// onPath says, when the entry's "litterbox" would not find this binary
// on PATH, what the client would run instead; "" when it would.
func onPath() string {
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(self); err == nil {
		self = r
	}
	found := findOnPath(mcpclients.Command)
	if found == "" {
		return fmt.Sprintf("the entry runs %q from PATH, and PATH has none: install it (make install, from a clone) or add %s to PATH", mcpclients.Command, filepath.Dir(self))
	}
	if r, err := filepath.EvalSymlinks(found); err == nil {
		found = r
	}
	if found != self {
		return fmt.Sprintf("the entry runs %q from PATH, which is %s, not this binary (%s)", mcpclients.Command, found, self)
	}
	return ""
}

// serverEntry is the client's entry starting litterbox's mcp server, by
// name from PATH, on the client's project (its working directory, or the
// client's own variable for it), with the global flags and sandboxes this
// run names: nothing of this machine, so a committed entry works in every
// clone.
func serverEntry(e *cli.Env, o mcpConfigOptions, client mcpclients.Client) (mcpclients.Server, error) {
	srv := mcpclients.Server{Name: o.Name, Command: mcpclients.Command, Args: append([]string{"mcp"}, client.RepoArgs...)}
	if e.Runtime != "docker" {
		srv.Args = append(srv.Args, "--runtime", e.Runtime)
	}
	srv.Args = append(srv.Args, e.EngineArgs()...)
	if _, err := mcp.NewScope(o.All, o.Sandboxes, ""); err != nil {
		return mcpclients.Server{}, cli.UsageError{Err: err}
	}
	if o.All {
		srv.Args = append(srv.Args, "--all-sandboxes")
	}
	for _, s := range o.Sandboxes {
		srv.Args = append(srv.Args, "--sandbox", s)
	}
	return srv, nil
}

// writePlan merges the plan into the client's files and says what each
// file got; a file it cannot write safely is printed to add by hand.
func writePlan(e *cli.Env, plan mcpclients.Plan) error {
	if err := plan.Write(); err != nil {
		for _, f := range plan.Files {
			if f.Err != nil {
				fmt.Fprintf(e.Stderr, "Add this to %s by hand:\n%s", f.Path, f.New)
			}
		}
		return err
	}
	for _, f := range plan.Files {
		switch {
		case f.Manual:
			printFile(e, f, e.Stdout)
		case f.Changed():
			fmt.Fprintf(e.Stdout, "Wrote %s to %s.\n", f.What, f.Path)
		default:
			fmt.Fprintf(e.Stdout, "%s already has %s; nothing changed.\n", f.Path, f.What)
		}
	}
	printNotes(e, plan.Notes)
	return nil
}

// printPlan prints every file of the plan, for the user to merge by hand,
// and its notes.
func printPlan(e *cli.Env, p mcpclients.Plan) {
	for i, f := range p.Files {
		if i == 0 {
			printFile(e, f, e.Stdout)
			continue
		}
		printFile(e, f, e.Stderr)
	}
	printNotes(e, p.Notes)
}

// printFile prints a file's content on w, after a line on stderr naming
// it. Only the server entry's file goes to stdout, so that
// `mcp-config claude > .mcp.json` is one valid file; the others follow on
// stderr, for --write or a hand merge.
func printFile(e *cli.Env, f mcpclients.FileChange, w io.Writer) {
	where := ""
	if w != e.Stdout {
		where = "; on stderr, below"
	}
	if f.Manual {
		fmt.Fprintf(e.Stderr, "# %s: add to %s by hand (mcp-config never writes it)%s\n", f.Doc, f.Path, where)
	} else {
		fmt.Fprintf(e.Stderr, "# %s: merge into %s, or run again with --write%s\n", f.Doc, f.Path, where)
	}
	fmt.Fprint(w, string(f.New))
}

// printNotes says what the client cannot be made to enforce.
func printNotes(e *cli.Env, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(e.Stderr, "note: %s\n", n)
	}
}

// findOnPath is the file a client's "name" would run: the first
// executable of that name in a directory of PATH ("" when none is). It
// looks as exec.LookPath does, which only runner may import.
func findOnPath(name string) string {
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
