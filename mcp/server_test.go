package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
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
	dir := testenv.ReplayRepo(t, "mcprepo")
	r := testenv.Transcript(t, filepath.Join("testdata", name+".json"), runner.Subst{dir: "$REPO"})
	// A fixed repository id, so container names match the transcripts.
	if err := layout.PinRepoID(filepath.Join(dir, ".git"), "5eed1d01"); err != nil {
		t.Fatal(err)
	}
	cfg := config.Default()
	cfg.CPUs = "2"
	m, err := sandbox.Open(context.Background(), runner.Audit{Inner: r}, engine.Docker, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.Repo.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	m.Agent.PinHelper(testenv.ReplayHelper(t), "replay")
	return startClient(t, m, nil), m
}

// startClient starts a server of m's sandboxes (scope's, when set) in this
// process and returns its client, past the handshake.
func startClient(t *testing.T, m *sandbox.Manager, scope *Scope) *client.Client {
	t.Helper()
	return clientOf(t, New(m, "test", io.Discard, scope, nil))
}

// clientOf starts a client of srv in this process, past the handshake.
func clientOf(t *testing.T, srv *server.MCPServer) *client.Client {
	t.Helper()
	c, err := client.NewInProcessClient(srv)
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
	return c
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
		checkSchema(t, tool, data)
	}
	return res, obj
}

// checkSchema validates a result's structured content against the tool's
// output schema with a validator of its own (not mcp-go's).
func checkSchema(t *testing.T, tool string, data []byte) {
	t.Helper()
	c := jsonschema.NewCompiler()
	var doc any
	st := New(nil, "test", io.Discard, nil, nil).GetTool(tool)
	if st == nil { // a reviewer's tool
		st = New(nil, "test", io.Discard, &Scope{Review: true}, nil).GetTool(tool)
	}
	if st == nil {
		t.Fatalf("no tool %s", tool)
	}
	if err := json.Unmarshal(st.Tool.RawOutputSchema, &doc); err != nil {
		t.Fatalf("%s: output schema: %v", tool, err)
	}
	if err := c.AddResource("mem://"+tool, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://" + tool)
	if err != nil {
		t.Fatalf("%s: output schema: %v", tool, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("%s: structuredContent %s does not match its output schema: %v", tool, data, err)
	}
}

// Every tool declares an output schema, and the newest protocol version
// mcp-go negotiates through initialize, 2025-11-25, is what the server
// answers to a client that asks for it.
func TestEveryToolHasAnOutputSchemaAndProtocolIsNegotiated(t *testing.T) {
	c := replayClient(t, "tools")
	res, err := c.ListTools(context.Background(), gomcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 17 {
		t.Errorf("%d tools, want 17", len(res.Tools))
	}
	for _, tool := range res.Tools {
		if schema, _ := json.Marshal(tool.OutputSchema); tool.OutputSchema.Type != "object" || !strings.Contains(string(schema), `"properties"`) {
			t.Errorf("%s: output schema %s", tool.Name, schema)
		}
		if schema, _ := json.Marshal(tool.InputSchema); tool.InputSchema.Type != "object" || (tool.Name != "sandbox-list" && !strings.Contains(string(schema), `"required"`)) {
			t.Errorf("%s: input schema %s", tool.Name, schema)
		}
		// The write limit the agent reads is the one write enforces.
		if tool.Name == "write" && (!strings.Contains(tool.Description, "[snapshot] max-file-size (50.0 MiB unless") || !strings.Contains(tool.Description, "never over 64.0 MiB")) {
			t.Errorf("write states no limit, or another than it enforces: %q", tool.Description)
		}
	}
	srv := New(nil, "test", io.Discard, nil, nil)
	msg := srv.HandleMessage(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	data, _ := json.Marshal(msg)
	if !strings.Contains(string(data), `"protocolVersion":"2025-11-25"`) {
		t.Errorf("initialize answered %s", data)
	}
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

	// A sandbox without services has an empty status, not an error (this
	// call used to panic in the handler).
	res, obj = call(t, c, "sandbox-service", map[string]any{"sandbox": "my-feature-name", "action": "status"})
	if svcs, ok := obj["services"].([]any); res.IsError || !ok || len(svcs) != 0 || !strings.Contains(text(res), "no services") {
		t.Errorf("status without services: %v %q", obj, text(res))
	}

	// Every call is in the audit log, with the commands it caused.
	entries, err := m.Repo.ReadAudit("")
	if err != nil {
		t.Fatal(err)
	}
	var tools, statuses []string
	for _, e := range entries {
		tools = append(tools, e.Tool)
		statuses = append(statuses, e.Status)
	}
	if strings.Join(tools, ",") != "sandbox-create,sandbox-create,sandbox-create,sandbox-create,sandbox-list,sandbox-service" ||
		strings.Join(statuses, ",") != "ok,error,error,error,ok,ok" {
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
	if mine, err := m.Repo.ReadAudit("My Feature Name"); err != nil || len(mine) != 3 { // create, its duplicate, the status
		t.Errorf("audit of one sandbox: %d entries, %v", len(mine), err)
	}
}

// A timeout is a limit whatever its size: a tiny one does not become the
// default, and a huge one is refused instead of overflowing.
func TestSeconds(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want time.Duration
		bad  bool
	}{{0, 0, false}, {1e-12, time.Nanosecond, false}, {0.5, 500 * time.Millisecond, false}, {120, 2 * time.Minute, false},
		{-1, 0, true}, {1e300, 0, true}, {math.NaN(), 0, true}} {
		got, err := seconds(c.in)
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("seconds(%g) = %v, %v", c.in, got, err)
		}
	}
}

// Arguments are read through the tools' Go types: a missing or mistyped
// argument, or two ways of giving an edit, is the caller's error, named in
// one line, before anything runs.
func TestArgumentErrors(t *testing.T) {
	c := replayClient(t, "args")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"bash", map[string]any{"command": "true"}, "missing required argument 'sandbox'"},
		{"bash", map[string]any{"sandbox": "x"}, "missing required argument 'command'"},
		{"bash", map[string]any{"sandbox": "x", "command": "true", "timeout": "soon"}, "invalid arguments: argument 'timeout' must be a number, not a string"},
		{"bash", map[string]any{"sandbox": "x", "command": "true", "timeout": -1}, "timeout must be a number of seconds, not negative"},
		{"bash", map[string]any{"sandbox": "x", "command": "true", "name": "web"}, "name is for background commands: set background: true"},
		{"read", map[string]any{"sandbox": "x", "path": "a", "offset": "ten"}, "invalid arguments: argument 'offset' must be an integer, not a string"},
		{"read", map[string]any{"sandbox": "x", "path": "a", "limit": 2.5}, "invalid arguments: argument 'limit' must be an integer, not a number"},
		{"ls", map[string]any{"sandbox": "x", "recursive": "yes"}, "invalid arguments: argument 'recursive' must be true or false, not a string"},
		{"write", map[string]any{"sandbox": "x", "path": "a"}, "missing required argument 'content'"},
		{"edit", map[string]any{"sandbox": "x", "path": "a", "new_string": "b"}, "missing required argument 'old_string' (or give edits)"},
		{"edit", map[string]any{"sandbox": "x", "path": "a", "old_string": "b"}, "missing required argument 'new_string'"},
		{"edit", map[string]any{"sandbox": "x", "path": "a", "old_string": "b", "new_string": "c", "edits": []any{}}, "give old_string and new_string, or edits, not both"},
		{"edit", map[string]any{"sandbox": "x", "path": "a", "edits": []any{map[string]any{"old_string": 1}}}, "invalid arguments: argument 'edits.old_string' must be a string, not a number"},
		{"edit", map[string]any{"sandbox": "x", "path": "a", "edits": "s/a/b/"}, "invalid arguments: argument 'edits' must be an array, not a string"},
		{"patch", map[string]any{"sandbox": "x", "path": "a"}, "missing required argument 'diff'"},
		{"glob", map[string]any{"sandbox": "x"}, "missing required argument 'pattern'"},
		{"sandbox-milestone", map[string]any{"sandbox": "x"}, "missing required argument 'message'"},
		{"sandbox-service", map[string]any{"sandbox": "x"}, "missing required argument 'action'"},
		{"sandbox-create", map[string]any{}, "missing required argument 'name'"},
		// Empty is not missing: the name is invalid, and the manager says why.
		{"sandbox-create", map[string]any{"name": ""}, `invalid sandbox name "": slugified names must be 1-63 characters`},
	} {
		res, _ := call(t, c, tc.tool, tc.args)
		if got := text(res); !res.IsError || !strings.HasPrefix(got, tc.want) || strings.Count(got, "\n") > 1 || strings.Contains(got, "Go struct") {
			t.Errorf("%s %v: %q (error %v), want %q", tc.tool, tc.args, got, res.IsError, tc.want)
		}
	}
}
