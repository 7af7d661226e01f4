package mcp

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/services"
	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// serviceLogLines is how much of a service's log the logs action returns.
const serviceLogLines = 200

func addServiceTools(s *server.MCPServer, h handlers) {
	s.AddTool(gomcp.NewTool("sandbox-ports",
		gomcp.WithDescription("List the sandbox's published ports: for each [[ports]] entry of the project config, the container port a service should listen on, "+
			"the host port (on 127.0.0.1) where a human reaches it, and the environment variables holding that host port."),
		sandboxParam(),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), h.ports)
	s.AddTool(gomcp.NewTool("sandbox-service",
		gomcp.WithDescription("Control a long-running service of the sandbox, as configured in [container.services.NAME] of the project config: "+
			"start, stop, restart, status (state and pid; every service when none is named) or logs (the last 200 lines). "+
			"Services keep running between tool calls; their output goes to "+services.LogDir+"/NAME.log."),
		sandboxParam(),
		gomcp.WithString("action", gomcp.Required(), gomcp.Enum("start", "stop", "restart", "status", "logs"), gomcp.Description("What to do.")),
		gomcp.WithString("service", gomcp.Description("Service name; optional for status.")),
		gomcp.WithDestructiveHintAnnotation(false),
	), h.service)
}

func (h handlers) ports(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox")
	if bad != nil {
		return bad, nil
	}
	ports, err := h.mgr.Ports(ctx, a[0])
	if err != nil {
		return errResult(err), nil
	}
	var b strings.Builder
	if len(ports) == 0 {
		b.WriteString("This sandbox publishes no ports.\n")
	}
	for _, p := range ports {
		fmt.Fprintf(&b, "%s: container port %d -> %s (%s)\n", p.Name, p.ContainerPort, p.Reach(), strings.Join(p.Env, ", "))
	}
	return structured(map[string]any{"ports": ports}, b.String()), nil
}

func (h handlers) service(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox", "action")
	if bad != nil {
		return bad, nil
	}
	name, action, svc := a[0], a[1], req.GetString("service", "")
	if action == "logs" {
		if svc == "" {
			return errResult(fmt.Errorf("logs needs the service argument")), nil
		}
		var buf bytes.Buffer
		if err := h.mgr.ServiceLogs(ctx, name, svc, serviceLogLines, &buf); err != nil {
			return errResult(err), nil
		}
		return structured(map[string]any{"service": svc, "log": buf.String()}, buf.String()), nil
	}
	states, err := h.mgr.Service(ctx, name, action, svc)
	if states == nil {
		return errResult(err), nil
	}
	var b strings.Builder
	for _, s := range states {
		b.WriteString(s.String() + "\n")
	}
	if err != nil {
		fmt.Fprintf(&b, "error: %s\n", oneLine(err))
	}
	r := structured(map[string]any{"services": states}, b.String())
	r.IsError = err != nil
	return r, nil
}
