package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/mcp"
	"github.com/litterbox-dev/litterbox/mcpclients"
)

// mcpConfigOptions are what mcp-config was asked.
type mcpConfigOptions struct {
	Client, File, Name string
	Sandboxes          []string
	Write, All         bool
}

func (a *app) mcpConfigCommand() *cobra.Command {
	var o mcpConfigOptions
	cmd := &cobra.Command{
		Use:   "mcp-config CLIENT",
		Short: "Print (or --write) the MCP server entry for claude, codex, opencode, cursor or zed",
		Long: `Print the MCP server entry that starts 'litterbox mcp' for this repository, in
the format of an agent client, or with --write merge it into the client's
project config file: other servers and settings are kept, and writing twice
changes nothing. The entry runs this litterbox binary by its absolute path.

  claude    .mcp.json               {"mcpServers": {...}}
  codex     .codex/config.toml      [mcp_servers.litterbox] (trusted projects)
  opencode  opencode.json           {"mcp": {... "type": "local"}}
  cursor    .cursor/mcp.json        {"mcpServers": {...}}
  zed       .zed/settings.json      {"context_servers": {...}}

A JSON file with comments or trailing commas is edited in place, comments
kept; a file that cannot be read safely is not rewritten: the entry is
printed for you to add by hand.

The server acts only on the sandboxes it creates; --sandbox NAME (repeatable)
adds existing ones to the entry's arguments, so a client that starts the
server again (every client does, per session) takes up the same sandboxes,
and --all-sandboxes lets it act on all of them. Each client keeps the
arguments in its entry ("args"; codex: args = [...]; zed: "command"."args").`,
		Example: `  litterbox mcp-config claude
  litterbox mcp-config codex --write
  litterbox mcp-config zed --write --file ~/.config/zed/settings.json`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"claude", "codex", "opencode", "cursor", "zed"},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Client = args[0]
			return a.runMCPConfig(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.Write, "write", false, "merge the entry into the client's config file")
	cmd.Flags().StringVar(&o.File, "file", "", "config file to write instead of the client's project file")
	cmd.Flags().StringVar(&o.Name, "name", "litterbox", "server name in the client's config")
	cmd.Flags().StringArrayVar(&o.Sandboxes, "sandbox", nil, "an existing sandbox the server may act on (repeatable)")
	cmd.Flags().BoolVar(&o.All, "all-sandboxes", false, "let the server act on every sandbox of the repository")
	return cmd
}

// runMCPConfig prints the client's server entry, or merges it into its file.
func (a *app) runMCPConfig(ctx context.Context, o mcpConfigOptions) error {
	client, err := mcpclients.Lookup(o.Client)
	if err != nil {
		return usageError{err}
	}
	m, err := a.manager(ctx)
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	if resolved, err := filepath.EvalSymlinks(bin); err == nil {
		bin = resolved
	}
	srv := mcpclients.Server{Name: o.Name, Command: bin, Args: []string{"mcp", "--repo", m.Root}}
	if a.runtime != "docker" {
		srv.Args = append(srv.Args, "--runtime", a.runtime)
	}
	if a.context != "" {
		srv.Args = append(srv.Args, "--context", a.context)
	}
	if _, err := mcp.NewScope(o.All, o.Sandboxes); err != nil {
		return usageError{err}
	}
	if o.All {
		srv.Args = append(srv.Args, "--all-sandboxes")
	}
	for _, s := range o.Sandboxes {
		srv.Args = append(srv.Args, "--sandbox", s)
	}
	path := o.File
	if path == "" {
		path = filepath.Join(m.Root, client.File)
	}
	if !o.Write {
		snippet, err := client.Snippet(srv)
		if err != nil {
			return err
		}
		fmt.Fprintf(a.stderr, "# %s: merge into %s, or run again with --write\n", client.Doc, path)
		fmt.Fprint(a.stdout, snippet)
		return nil
	}
	changed, err := client.WriteFile(path, srv)
	if err != nil {
		snippet, _ := client.Snippet(srv)
		fmt.Fprintf(a.stderr, "Add this by hand:\n%s", snippet)
		return err
	}
	if changed {
		fmt.Fprintf(a.stdout, "Wrote MCP server '%s' to %s.\n", o.Name, path)
	} else {
		fmt.Fprintf(a.stdout, "%s already has MCP server '%s'; nothing changed.\n", path, o.Name)
	}
	return nil
}
