package mcp

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	gomcp "github.com/mark3labs/mcp-go/mcp"

	"github.com/litterbox-dev/litterbox/config"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
	"github.com/litterbox-dev/litterbox/sandbox"
)

// replayClient starts the server in process over a Manager whose commands
// come from testdata/<name>.json (or, with -record, the real engine).
func replayClient(t *testing.T, name string) *client.Client {
	t.Helper()
	c, _ := replayServer(t, name)
	return c
}

// replayServer is replayClient that also returns the server's Manager; its
// runner chain audits, as litterbox mcp's does.
func replayServer(t *testing.T, name string) (*client.Client, *sandbox.Manager) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mcprepo")
	if *testenv.Record {
		testenv.NewRepo(t, dir, testenv.SmallFiles)
		testenv.RemoveAll(dir, "mcprepo")
		testenv.CleanupRepo(t, dir, "mcprepo")
	} else if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := testenv.Transcript(t, filepath.Join("testdata", name+".json"), runner.Subst{dir: "$REPO"})
	// A fixed repository id, so container names match the transcripts.
	if err := sandbox.PinRepoID(filepath.Join(dir, ".git"), "5eed1d01"); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.CPUs = "2"
	m, err := sandbox.Open(context.Background(), runner.Audit{Inner: r}, sandbox.Docker, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	m.PinHelper(testenv.ReplayHelper(t), "replay")
	c, err := client.NewInProcessClient(New(m, "test", io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := gomcp.InitializeRequest{}
	init.Params.ProtocolVersion = gomcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = gomcp.Implementation{Name: "test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return c, m
}

func call(t *testing.T, c *client.Client, tool string, args map[string]any) (*gomcp.CallToolResult, map[string]any) {
	t.Helper()
	req := gomcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: protocol error %v (failures must be tool results)", tool, err)
	}
	var obj map[string]any
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(data, &obj)
	}
	return res, obj
}

func text(r *gomcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(gomcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestToolsAreListedWithTheirParameters(t *testing.T) {
	c := replayClient(t, "tools")
	res, err := c.ListTools(context.Background(), gomcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool.InputSchema.Required
	}
	if r, ok := got["sandbox-create"]; !ok || strings.Join(r, ",") != "name" {
		t.Errorf("sandbox-create required %v", r)
	}
	if _, ok := got["sandbox-list"]; !ok {
		t.Errorf("sandbox-list missing from %v", got)
	}
}

func TestReplaySandboxCreateAndList(t *testing.T) {
	c, m := replayServer(t, "create-list")

	res, obj := call(t, c, "sandbox-create", map[string]any{"name": "My Feature Name!@#"})
	if res.IsError {
		t.Fatalf("create failed: %s", text(res))
	}
	for k, want := range map[string]string{"name": "my-feature-name", "branch": "litterbox/my-feature-name",
		"container": "litterbox-mcprepo-5eed1d01-my-feature-name", "status": "active", "workdir": "/src"} {
		if obj[k] != want {
			t.Errorf("%s = %v, want %s", k, obj[k], want)
		}
	}
	setup, _ := obj["setup"].(map[string]any)
	if setup["command"] != "echo hello world" || setup["stdout"] != "hello world\n" || setup["exit_code"] != float64(0) {
		t.Errorf("setup %v", setup)
	}
	if !strings.Contains(text(res), "is ready") {
		t.Errorf("text rendering %q", text(res))
	}

	res, _ = call(t, c, "sandbox-create", map[string]any{"name": "my-feature-name"})
	if !res.IsError || !strings.Contains(text(res), "already exists") {
		t.Errorf("duplicate: isError %v %q", res.IsError, text(res))
	}
	res, _ = call(t, c, "sandbox-create", map[string]any{"name": "!!!"})
	if !res.IsError || !strings.Contains(text(res), "1-63 characters") {
		t.Errorf("invalid name: isError %v %q", res.IsError, text(res))
	}
	res, _ = call(t, c, "sandbox-create", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "name") {
		t.Errorf("missing name: isError %v %q", res.IsError, text(res))
	}

	res, obj = call(t, c, "sandbox-list", nil)
	list, _ := obj["sandboxes"].([]any)
	if res.IsError || len(list) != 1 {
		t.Fatalf("list: %s %v", text(res), obj)
	}
	first := list[0].(map[string]any)
	if first["name"] != "my-feature-name" || first["status"] != "active" || first["branch"] != "litterbox/my-feature-name" {
		t.Errorf("listed %v", first)
	}
	if strings.Count(text(res), "\n") != 1 || strings.Contains(text(res), "\n\n") {
		t.Errorf("list text %q", text(res))
	}

	// Every call is in the audit log, with the commands it caused.
	entries, err := m.ReadAudit("")
	if err != nil {
		t.Fatal(err)
	}
	var tools, statuses []string
	for _, e := range entries {
		tools = append(tools, e.Tool)
		statuses = append(statuses, e.Status)
	}
	if strings.Join(tools, ",") != "sandbox-create,sandbox-create,sandbox-create,sandbox-create,sandbox-list" ||
		strings.Join(statuses, ",") != "ok,error,error,error,ok" {
		t.Fatalf("audit: tools %v statuses %v", tools, statuses)
	}
	audited := entries[0]
	if audited.Sandbox != "my-feature-name" || audited.Arguments["name"] != "My Feature Name!@#" || audited.PID != os.Getpid() {
		t.Errorf("audit entry %+v", audited)
	}
	var sawRun bool
	for _, c := range audited.Commands {
		sawRun = sawRun || strings.HasPrefix(c.Line, "docker create --name litterbox-mcprepo-5eed1d01-my-feature-name ")
	}
	if !sawRun || !strings.Contains(entries[1].Error, "already exists") {
		t.Errorf("audit commands %+v, second error %q", audited.Commands, entries[1].Error)
	}
	if mine, err := m.ReadAudit("My Feature Name"); err != nil || len(mine) != 2 {
		t.Errorf("audit of one sandbox: %d entries, %v", len(mine), err)
	}
}
