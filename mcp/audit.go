package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/audit"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// auditMiddleware appends every tool call to the repository's audit log,
// with the docker and git commands it caused (collected by a runner.Audit in
// the Manager's runner chain through the call's context). A log that cannot
// be written is reported on errLog; the call's result stands.
func auditMiddleware(mgr *sandbox.Manager, errLog io.Writer, clientOf func(context.Context) string) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			trail := &runner.Trail{}
			start := time.Now()
			client := clientOf(ctx)
			res, err := next(layout.WithClient(runner.WithTrail(ctx, trail), client), req)
			args := req.GetArguments()
			e := audit.Entry{
				Time: start.UTC(), Tool: req.Params.Name, Arguments: audit.ElideArguments(args),
				Status: "ok", DurationMS: time.Since(start).Milliseconds(), PID: os.Getpid(), Commands: trail.Commands(),
			}
			for _, k := range []string{"sandbox", "name"} {
				if v, ok := args[k].(string); ok && v != "" {
					e.Sandbox = v
					if slug, perr := hostrepo.ParseName(v); perr == nil {
						e.Sandbox = slug
					}
					break
				}
			}
			if e.Sandbox != "" {
				if a, aerr := mgr.Proxies().ActivityOf(ctx, e.Sandbox, start); aerr == nil {
					e.Refused, e.Injected = audit.Counts(a.Refused), audit.Counts(a.Injected)
				}
			}
			if res != nil {
				e.ExitCode, e.Snapshot = outcome(res.StructuredContent)
			}
			e.Client = client
			switch {
			case err != nil:
				e.Status, e.Error = "error", err.Error()
			case res != nil && res.IsError:
				e.Status, e.Error = "error", resultText(res)
			}
			if werr := mgr.Repo.AppendAudit(e); werr != nil {
				fmt.Fprintf(errLog, "litterbox mcp: audit log: %v\n", werr)
			}
			return res, err
		}
	}
}

// outcome is the exit status and the commit a tool's structured result
// reports, where it has them (bash has both, the file tools a snapshot).
func outcome(structured any) (exit *int, snapshot string) {
	if structured == nil {
		return nil, ""
	}
	data, err := json.Marshal(structured)
	if err != nil {
		return nil, ""
	}
	var o struct {
		ExitCode *int    `json:"exit_code"`
		Snapshot *string `json:"snapshot"`
		Commit   string  `json:"commit"`
	}
	if json.Unmarshal(data, &o) != nil {
		return nil, ""
	}
	if o.Snapshot != nil {
		snapshot = *o.Snapshot
	}
	if snapshot == "" {
		snapshot = o.Commit
	}
	return o.ExitCode, snapshot
}

func resultText(r *gomcp.CallToolResult) string {
	for _, c := range r.Content {
		if t, ok := c.(gomcp.TextContent); ok {
			return agenttext.FirstLine(t.Text)
		}
	}
	return ""
}
