// Package mcp serves Litterbox's agent tools over the Model Context Protocol
// (mcp-go, stdio). Handlers are thin: they parse arguments, call the sandbox
// Manager and render its results; every failure is a tool result with isError
// set and a one-line reason, never a protocol error.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"slices"
	"strings"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/present"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/textedit"
)

// New returns an MCP server exposing the sandbox tools of mgr. Every tool call
// is appended to the repository's audit log; problems writing it go to
// errLog, never to stdout. refill, when set, starts the warm pool's refill
// apart from the server after a create that asks for it (create.Created.Refill).
func New(mgr *sandbox.Manager, version string, errLog io.Writer, scope *Scope, refill func()) *server.MCPServer {
	return newServer(mgr, version, errLog, scope, refill, nil)
}

// Unavailable is a server for a repository that could not be opened (a
// --repo that is no repository, say): it answers the handshake and lists
// the tools, and every call is refused with why, so the client and its
// agent read the reason instead of a closed connection.
func Unavailable(version string, errLog io.Writer, why error) *server.MCPServer {
	return newServer(nil, version, errLog, nil, nil, why)
}

func newServer(mgr *sandbox.Manager, version string, errLog io.Writer, scope *Scope, refill func(), broken error) *server.MCPServer {
	if scope != nil {
		scope.clients = func() map[string]string {
			out := map[string]string{}
			for slug, rec := range mgr.Repo.Store().All() {
				out[slug] = rec.Client
			}
			return out
		}
	}
	opts := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions("Litterbox gives you a sandbox: a container holding a copy of the repository at /src. " +
			"Create one with sandbox-create, then work only inside it. Every change you make is committed to the sandbox's branch " +
			"for a human to review; you cannot delete sandboxes."),
	}
	if broken != nil {
		opts = append(opts, server.WithToolHandlerMiddleware(refuseAll(broken)))
	} else {
		opts = append(opts,
			server.WithToolHandlerMiddleware(auditMiddleware(mgr, errLog, scope.clientOf)),
			server.WithToolHandlerMiddleware(scopeMiddleware(scope, func(ctx context.Context, slug string) (bool, error) { return mgr.Repo.Known(ctx, slug) })),
			server.WithToolHandlerMiddleware(rejectionMiddleware(mgr, scope)))
	}
	if scope.reviewing() {
		opts = append(opts, reviewOnly()...)
	}
	s := server.NewMCPServer("litterbox", version, opts...)
	h := handlers{mgr: mgr, scope: scope, refill: refill}
	s.AddTool(gomcp.NewTool("sandbox-create", input[createIn](nil), output[create.Created](), gomcp.WithOpenWorldHintAnnotation(false),
		gomcp.WithDescription("Create a sandbox: a container with a copy of the repository at /src (from HEAD, or base_ref) and a git branch litterbox/<name> that receives every change made in it. "+
			"Reads .litterbox.toml and .litterbox.local.toml, runs the project's setup command and reports its output, starts the configured services and reports the published ports."),
		gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.create))
	s.AddTool(gomcp.NewTool("sandbox-fork", input[forkIn](nil), output[create.Created](), gomcp.WithOpenWorldHintAnnotation(false),
		gomcp.WithDescription("Fork a sandbox: a new sandbox whose branch starts at this one's latest commit and whose /src is a copy of this one's, "+
			"ignored files (installed dependencies, build output) included, so no setup runs. Use it to try a second approach without losing the first; "+
			"the original keeps running unchanged."),
		gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.fork))
	s.AddTool(gomcp.NewTool("sandbox-list", input[listIn](nil), output[listOut](), gomcp.WithOpenWorldHintAnnotation(false), gomcp.WithIdempotentHintAnnotation(true),
		gomcp.WithDescription("List the sandboxes of this repository that this server may act on (those its client made, with this server or an earlier one, and those it was started with), with their status, branch, ports, background commands and, with a network allowlist, what its proxy refused."),
		gomcp.WithReadOnlyHintAnnotation(true),
		gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.list))
	addAgentTools(s, h)
	addServiceTools(s, h)
	if scope.reviewing() {
		addReviewTool(s, h)
	}
	return s
}

// refuseAll answers every call with why, before any tool runs.
func refuseAll(why error) server.ToolHandlerMiddleware {
	return func(server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(context.Context, gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			return errResult(why), nil
		}
	}
}

// Serve runs the server on stdin/stdout until stdin closes or ctx ends.
// Diagnostics go to errLog, never to stdout, which carries only the protocol.
func Serve(ctx context.Context, s *server.MCPServer, in io.Reader, out io.Writer, errLog io.Writer) error {
	std := server.NewStdioServer(s)
	std.SetErrorLogger(log.New(errLog, "litterbox mcp: ", log.LstdFlags))
	return std.Listen(ctx, in, out)
}

type handlers struct {
	mgr   *sandbox.Manager
	scope *Scope // nil: every sandbox
	// refill starts the warm pool's refill; nil: none.
	refill func()
}

func (h handlers) create(ctx context.Context, _ gomcp.CallToolRequest, in createIn) (*gomcp.CallToolResult, error) {
	// base_ref may name or reach only this server's sandboxes' branches.
	res, err := h.mgr.Create(ctx, create.CreateOptions{Name: in.Name, BaseRef: in.BaseRef, MayBaseOn: func(slug string) bool { return h.scope.allows(ctx, slug) }})
	if err != nil {
		return errResult(err), nil
	}
	if res.Refill && h.refill != nil {
		h.refill()
	}
	h.scope.add(res.Name)
	// A failed setup is no error: the sandbox exists and is usable, and
	// an error would invite a retry of the create. The text says what
	// failed and how to go on.
	return structured(res, present.CreatedForAgent(res)), nil
}

func (h handlers) fork(ctx context.Context, _ gomcp.CallToolRequest, in forkIn) (*gomcp.CallToolResult, error) {
	res, err := h.mgr.Creator.Fork(ctx, create.ForkOptions{Source: in.Sandbox, Name: in.Name})
	if err != nil {
		return errResult(err), nil
	}
	h.scope.add(res.Name)
	return structured(res, present.CreatedForAgent(res)), nil
}

func (h handlers) list(ctx context.Context, _ gomcp.CallToolRequest, _ listIn) (*gomcp.CallToolResult, error) {
	list, err := h.mgr.List(ctx, false)
	if err != nil {
		return errResult(err), nil
	}
	all := len(list)
	list = slices.DeleteFunc(list, func(i sandbox.Info) bool { return !h.scope.allows(ctx, i.Name) })
	if list == nil {
		list = []sandbox.Info{}
	}
	// The forecast of this server's sandboxes among themselves: another
	// server's are not named to this one.
	_ = h.mgr.Forecast(ctx, list)
	var b strings.Builder
	switch others := all - len(list); {
	case len(list) == 0 && others == 0:
		b.WriteString("No sandboxes in this repository.\n")
	case len(list) == 0:
		fmt.Fprintf(&b, "None that this server may act on: the repository's %d other sandbox(es) belong to other servers or people; sandbox-create makes one of yours.\n", others)
	}
	for _, s := range list {
		fmt.Fprintf(&b, "%s\t%s\t%s", s.Name, s.Status, s.Branch)
		for _, p := range s.Ports {
			fmt.Fprintf(&b, "\t%s=%s", p.Name, p.Address)
		}
		if len(s.Refused) > 0 {
			fmt.Fprintf(&b, "\trefused: %s", egressproxy.RefusedSummary(s.Refused))
		}
		if r := s.Review; r != nil {
			fmt.Fprintf(&b, "\t%s", reviewText(r))
		}
		if f := present.ForecastLine(s.Forecast); f != "" {
			fmt.Fprintf(&b, "\t%s", f)
			if s.Forecast.Behind > 0 {
				b.WriteString(" (sandbox-sync brings it up to date)")
			}
		}
		b.WriteByte('\n')
	}
	return structured(listOut{Sandboxes: list}, b.String()), nil
}

// reviewText is where a sandbox's work stands, for its agent: "ready:
// SUMMARY", "rejected: WHY", or "working (rejected: WHY)" once the work
// went on after the last mark.
func reviewText(r *sandbox.Review) string {
	mark := r.Mark
	if r.Message != "" {
		mark += ": " + agenttext.FirstLine(r.Message)
	}
	switch {
	case r.Mark == "":
		return r.State
	case r.State != r.Mark:
		return r.State + " (" + mark + ")"
	}
	return mark
}

// structured returns v as structured content with text as its rendering.
// Structured content must be a JSON object, so v is round-tripped to a map.
func structured(v any, text string) *gomcp.CallToolResult {
	data, err := json.Marshal(v)
	if err != nil {
		return errResult(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil {
		return errResult(err)
	}
	return gomcp.NewToolResultStructured(obj, text)
}

// errResult is a tool's error, in one line; a missed edit also shows the
// lines it most likely meant.
func errResult(err error) *gomcp.CallToolResult {
	var miss *textedit.MissError
	if errors.As(err, &miss) {
		return gomcp.NewToolResultError(err.Error())
	}
	return gomcp.NewToolResultError(oneLine(err))
}

func ensureNL(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}
