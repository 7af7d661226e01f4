package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/mcpclients"
)

func (a *app) mcpConfigCommand() *cobra.Command {
	var write bool
	var file, name string
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

A JSON file with comments is not rewritten: the entry is printed for you to
add by hand.`,
		Example: `  litterbox mcp-config claude
  litterbox mcp-config codex --write
  litterbox mcp-config zed --write --file ~/.config/zed/settings.json`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"claude", "codex", "opencode", "cursor", "zed"},
		RunE: func(cmd *cobra.Command, args []string) error {
			client, err := mcpclients.Lookup(args[0])
			if err != nil {
				return usageError{err}
			}
			m, err := a.manager(cmd.Context())
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
			srv := mcpclients.Server{Name: name, Command: bin, Args: []string{"mcp", "--repo", m.Root}}
			if a.runtime != "docker" {
				srv.Args = append(srv.Args, "--runtime", a.runtime)
			}
			if a.context != "" {
				srv.Args = append(srv.Args, "--context", a.context)
			}
			path := file
			if path == "" {
				path = filepath.Join(m.Root, client.File)
			}
			if !write {
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
				fmt.Fprintf(a.stdout, "Wrote MCP server '%s' to %s.\n", name, path)
			} else {
				fmt.Fprintf(a.stdout, "%s already has MCP server '%s'; nothing changed.\n", path, name)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&write, "write", false, "merge the entry into the client's config file")
	cmd.Flags().StringVar(&file, "file", "", "config file to write instead of the client's project file")
	cmd.Flags().StringVar(&name, "name", "litterbox", "server name in the client's config")
	return cmd
}
