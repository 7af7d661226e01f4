package mcp

import (
	"context"
	"fmt"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// rejectionMiddleware puts a person's rejection of a sandbox's work at the
// head of the next tool result on that sandbox, once: the agent reads the
// reason where it looks, whatever tool it calls next. It runs inside the
// scope's check, so a call refused for scope neither reads nor spends it.
func rejectionMiddleware(mgr *sandbox.Manager) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			res, err := next(ctx, req)
			name, _ := req.GetArguments()["sandbox"].(string)
			if err != nil || res == nil || name == "" {
				return res, err
			}
			slug, perr := hostrepo.ParseName(name)
			if perr != nil {
				return res, err
			}
			if why := mgr.Rejection(slug); why != "" {
				note := gomcp.NewTextContent(fmt.Sprintf("A person rejected the work of sandbox '%s': %s\nRework it, then call sandbox-ready again.\n", slug, why))
				res.Content = append([]gomcp.Content{note}, res.Content...)
			}
			return res, err
		}
	}
}
