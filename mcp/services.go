package mcp

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/services"
)

// serviceLogLines is how much of a service's log the logs action returns.
const serviceLogLines = 200

func addServiceTools(s *server.MCPServer, h handlers) {
	s.AddTool(gomcp.NewTool("sandbox-ports", input[sandboxIn](nil), output[portsOut](), gomcp.WithOpenWorldHintAnnotation(false), gomcp.WithIdempotentHintAnnotation(true),
		gomcp.WithDescription("List the sandbox's published ports: for each [[ports]] entry of the project config, the container port a service should listen on, "+
			"the host port (on 127.0.0.1) where a human reaches it, and the environment variables holding that host port."),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.ports))
	s.AddTool(gomcp.NewTool("sandbox-service", input[serviceIn](map[string][]any{"action": {"start", "stop", "restart", "status", "logs"}}), output[serviceOut](), gomcp.WithOpenWorldHintAnnotation(false),
		gomcp.WithDescription("Control a long-running service of the sandbox, as configured in [container.services.NAME] of the project config or started by bash with background: "+
			"start, stop, restart, status (state and pid; every service when none is named) or logs (the last 200 lines). "+
			"Services keep running between tool calls; their output goes to "+services.LogDir+"/NAME.log."),
		gomcp.WithDestructiveHintAnnotation(true),
	), typed(h.service))
}

func (h handlers) ports(ctx context.Context, _ gomcp.CallToolRequest, in sandboxIn) (*gomcp.CallToolResult, error) {
	ports, err := h.mgr.Ports(ctx, in.Sandbox)
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
	return structured(portsOut{Ports: ports}, b.String()), nil
}

func (h handlers) service(ctx context.Context, _ gomcp.CallToolRequest, in serviceIn) (*gomcp.CallToolResult, error) {
	name, action, svc := in.Sandbox, in.Action, in.Service
	if action == "logs" {
		if svc == "" {
			return errResult(fmt.Errorf("logs needs the service argument")), nil
		}
		var buf bytes.Buffer
		if err := servicectl.Logs(ctx, h.mgr.Repo, name, svc, serviceLogLines, false, &buf); err != nil {
			return errResult(err), nil
		}
		return structured(serviceOut{Service: svc, Log: ptr(buf.String())}, buf.String()), nil
	}
	states, err := servicectl.Control(ctx, h.mgr.Repo, name, action, svc)
	if states == nil && err != nil {
		return errResult(err), nil
	}
	if states == nil {
		states = []services.State{}
	}
	var b strings.Builder
	if len(states) == 0 {
		b.WriteString("This sandbox has no services: none is configured and bash started none with background: true.\n")
	}
	for _, s := range states {
		b.WriteString(s.String() + "\n")
	}
	if err != nil {
		fmt.Fprintf(&b, "error: %s\n", oneLine(err))
	}
	r := structured(serviceOut{Services: &states}, b.String())
	r.IsError = err != nil
	return r, nil
}
