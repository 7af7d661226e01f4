package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/reviewstate"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// rejectionMiddleware puts a person's rejection of a sandbox's work at the
// head of the next tool result on that sandbox, once: the agent reads the
// reason where it looks, whatever tool it calls next. It runs inside the
// scope's check, so a call refused for scope neither reads nor spends it.
// A reviewer's server tells nothing: the rejection is for the agent that
// works in the sandbox.
func rejectionMiddleware(mgr *sandbox.Manager, scope *Scope) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			res, err := next(ctx, req)
			name, _ := req.GetArguments()["sandbox"].(string)
			if err != nil || res == nil || name == "" || scope.reviewing() {
				return res, err
			}
			slug, perr := hostrepo.ParseName(name)
			if perr != nil {
				return res, err
			}
			if why, by := mgr.Rejection(slug); why != "" {
				who := "A person"
				if by == reviewstate.ByReviewer {
					who = "Its reviewer"
				}
				note := gomcp.NewTextContent(fmt.Sprintf("%s rejected the work of sandbox '%s': %s\nRework it, then call sandbox-ready again.\n", who, slug, why))
				res.Content = append([]gomcp.Content{note}, res.Content...)
			}
			return res, err
		}
	}
}

// reviewTools are what a reviewer's server offers: the tools that read,
// and sandbox-review for its findings.
var reviewTools = []string{"read", "ls", "glob", "grep", "sandbox-diff", "sandbox-list", "sandbox-review"}

// reviewOnly lists and runs only reviewTools; any other tool a reviewer's
// client calls anyway is refused as a tool result, before it runs. The
// list is cut after it is made rather than by a tool filter, which would
// make such a call a protocol error ("tool not found").
func reviewOnly() []server.ServerOption {
	hooks := &server.Hooks{}
	hooks.AddAfterListTools(func(_ context.Context, _ any, _ *gomcp.ListToolsRequest, res *gomcp.ListToolsResult) {
		res.Tools = slices.DeleteFunc(res.Tools, func(t gomcp.Tool) bool { return !slices.Contains(reviewTools, t.Name) })
	})
	return []server.ServerOption{
		server.WithHooks(hooks),
		server.WithToolHandlerMiddleware(func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
			return func(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
				if !slices.Contains(reviewTools, req.Params.Name) {
					return errResult(fmt.Errorf("%s is refused: this server reviews (litterbox mcp --review) and offers only %s", req.Params.Name, strings.Join(reviewTools, ", "))), nil
				}
				return next(ctx, req)
			}
		}),
	}
}

type reviewIn struct {
	Sandbox string `json:"sandbox" jsonschema:"Name of the sandbox under review."`
	Verdict string `json:"verdict" jsonschema:"approve: the work is ready for the person; reject: it goes back to the agent that made it."`
	Notes   string `json:"notes" jsonschema:"Your findings, for the person and (on reject) the agent: what is wrong and what to change, or why it is fine (at most 4096 bytes)."`
}

// addReviewTool adds sandbox-review, a reviewer's findings as a mark on
// the sandbox: approve marks it ready for the person, reject sends it
// back to its agent, as litterbox reject does.
func addReviewTool(s *server.MCPServer, h handlers) {
	s.AddTool(gomcp.NewTool("sandbox-review", input[reviewIn](map[string][]any{"verdict": {"approve", "reject"}}), output[sandbox.Review](), gomcp.WithOpenWorldHintAnnotation(false),
		gomcp.WithDescription("Give your verdict on the sandbox's work with your findings. approve marks it ready for the person who takes it; "+
			"reject sends it back to the agent that made it, which reads your notes at the head of its next tool result. Nothing in the sandbox changes."),
		gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.review))
}

func (h handlers) review(ctx context.Context, _ gomcp.CallToolRequest, in reviewIn) (*gomcp.CallToolResult, error) {
	if strings.TrimSpace(in.Notes) == "" {
		return errResult(fmt.Errorf("notes are empty: say what you found")), nil
	}
	if in.Verdict != "approve" && in.Verdict != "reject" {
		return errResult(fmt.Errorf("verdict %q: give approve or reject", in.Verdict)), nil
	}
	res, err := h.mgr.ReviewerVerdict(ctx, in.Sandbox, in.Verdict == "approve", in.Notes)
	if err != nil {
		return errResult(err), nil
	}
	return structured(res, fmt.Sprintf("sandbox '%s' is marked %s by its reviewer; the person sees your notes in litterbox list\n", in.Sandbox, res.State)), nil
}
