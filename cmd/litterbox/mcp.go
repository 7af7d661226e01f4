package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/mcp"
)

// mcpOptions are what mcp was asked: the sandboxes besides its own that the
// server may act on, or all of them.
type mcpOptions struct {
	Sandboxes []string
	All       bool
	// Client names the client instead of its handshake.
	Client string
	// Review names the one sandbox a reviewer's server reads.
	Review string
}

func newMCPCommand(p *cli.Program) *cobra.Command {
	var o mcpOptions
	cmd := &cobra.Command{
		Use:     "mcp",
		Aliases: []string{"stdio"},
		Short:   "Serve the agent tools over MCP on stdin/stdout",
		Long: `Serve Litterbox's agent tools over the Model Context Protocol on stdin and
stdout, for an MCP client (Claude Code, Codex, Cursor, ...) to launch.
Only the protocol is written to stdout; logs go to stderr.

A server acts only on the sandboxes its client made and those named with
--sandbox (repeatable), so an agent cannot reach into another agent's
sandbox; --all-sandboxes lets one agent that orchestrates several act on
every sandbox of the repository. A sandbox belongs to the client that made
it, by the name the client gives when it connects (claude-code, codex, ...),
or by --client NAME: a client whose server is started again (clients do, per
session) takes up its sandboxes. Give two agents of one client different
--client names to keep them apart, and hand a sandbox to another client by
naming it with --sandbox in that client's entry.

--review NAME serves a reviewer agent: the tools that read (read, ls, glob,
grep, sandbox-diff, sandbox-list) over NAME alone, and sandbox-review for
its verdict and findings, which list shows and, on reject, the agent that
made the work reads. Every other tool is refused.`,
		Example: `  litterbox mcp --repo /path/to/project
  litterbox mcp --sandbox fix-login
  litterbox mcp --client reviewer
  litterbox mcp --review fix-login
  claude mcp add litterbox -- litterbox mcp --repo "$PWD"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCP(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().StringArrayVar(&o.Sandboxes, "sandbox", nil, "a sandbox this server may act on besides those it creates (repeatable)")
	cmd.Flags().BoolVar(&o.All, "all-sandboxes", false, "act on every sandbox of the repository")
	cmd.Flags().StringVar(&o.Client, "client", "", "the client's identity, which owns the sandboxes it makes (default: the name it gives when it connects)")
	cmd.Flags().StringVar(&o.Review, "review", "", "serve a reviewer of this sandbox: read-only tools and sandbox-review")
	return cmd
}

// runMCP serves the tools on e's stdin and stdout until stdin closes.
func runMCP(ctx context.Context, e *cli.Env, o mcpOptions) error {
	if o.All && len(o.Sandboxes) > 0 {
		return cli.UsageError{Err: errors.New("--all-sandboxes and --sandbox do not go together")}
	}
	if o.Review != "" && (o.All || len(o.Sandboxes) > 0) {
		return cli.UsageError{Err: errors.New("--review NAME serves that one sandbox: it does not go with --sandbox or --all-sandboxes")}
	}
	scope, err := mcp.NewScope(o.All, o.Sandboxes, o.Client)
	if o.Review != "" {
		scope, err = mcp.NewReviewScope(o.Review, o.Client)
	}
	if err != nil {
		return cli.UsageError{Err: err}
	}
	m, err := e.Open(ctx, cli.Opening{Audited: true})
	if err != nil {
		// A client that gets no handshake shows only "EOF": answer it,
		// and give the reason with every call (and here, on stderr).
		why := fmt.Errorf("litterbox mcp cannot serve: %w; give the server the repository with --repo DIR in the client's entry, or start the client in the repository", err)
		fmt.Fprintf(e.Stderr, "litterbox mcp: %v\n", why)
		return mcp.Serve(ctx, mcp.Unavailable(version, e.Stderr, why), e.Stdin, e.Stdout, e.Stderr)
	}
	// The session's calls go over a channel kept open per sandbox.
	m.Agent.KeepChannels()
	defer m.Agent.Close()
	refill := e.Refiller(context.WithoutCancel(ctx), m.Repo.Root)
	return mcp.Serve(ctx, mcp.New(m, version, e.Stderr, scope, refill), e.Stdin, e.Stdout, e.Stderr)
}
