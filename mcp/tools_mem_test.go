//go:build linux

package mcp

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	gomcp "github.com/mark3labs/mcp-go/mcp"

	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/sandbox/sandboxtest"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// memClient is an MCP client of a server in this process whose sandboxes
// live in the in-memory provider (the real helper, real git, no engine).
func memClient(t *testing.T) (*client.Client, *sandbox.Manager) {
	t.Helper()
	m, _ := sandboxtest.Mem(t, nil)
	return startClient(t, m, nil), m
}

// ok calls tool and fails the test on an error result.
func ok(t *testing.T, c *client.Client, tool string, args map[string]any) (string, map[string]any) {
	t.Helper()
	res, obj := call(t, c, tool, args)
	if res.IsError {
		t.Fatalf("%s %v: %s", tool, args, text(res))
	}
	return text(res), obj
}

// refused calls tool and wants an error result holding want.
func refused(t *testing.T, c *client.Client, tool string, args map[string]any, want string) {
	t.Helper()
	res, _ := call(t, c, tool, args)
	if !res.IsError || !strings.Contains(text(res), want) {
		t.Errorf("%s %v: error %v %q, want one holding %q", tool, args, res.IsError, text(res), want)
	}
}

// Every file tool through the protocol: what it returns, in text and in
// structured content, and what it commits.
func TestMemFileTools(t *testing.T) {
	c, m := memClient(t)
	ok(t, c, "sandbox-create", map[string]any{"name": "w"})
	sb := func(args map[string]any) map[string]any { args["sandbox"] = "w"; return args }

	txt, obj := ok(t, c, "write", sb(map[string]any{"path": "notes/a.txt", "content": "one\ntwo\nthree\n"}))
	if obj["bytes"] != float64(14) || obj["snapshot"] == nil || !strings.Contains(txt, "notes/a.txt") {
		t.Errorf("write: %q %v", txt, obj)
	}
	txt, obj = ok(t, c, "read", sb(map[string]any{"path": "notes/a.txt", "offset": 1, "limit": 1}))
	if !strings.Contains(txt, "     2\ttwo") || obj["total_lines"] != float64(3) {
		t.Errorf("read: %q %v", txt, obj)
	}
	_, obj = ok(t, c, "edit", sb(map[string]any{"path": "notes/a.txt", "old_string": "two", "new_string": "TWO"}))
	if obj["replacements"] != float64(1) || obj["snapshot"] == nil {
		t.Errorf("edit: %v", obj)
	}
	_, obj = ok(t, c, "edit", sb(map[string]any{"path": "notes/a.txt", "edits": []any{
		map[string]any{"old_string": "one", "new_string": "1"}, map[string]any{"old_string": "three", "new_string": "3"}}}))
	if obj["edits"] != float64(2) {
		t.Errorf("edits: %v", obj)
	}
	refused(t, c, "edit", sb(map[string]any{"path": "notes/a.txt", "old_string": "absent", "new_string": "x"}), "not found")
	_, obj = ok(t, c, "patch", sb(map[string]any{"path": "made.txt", "diff": "--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1 @@\n+made\n"}))
	if obj["created"] != true {
		t.Errorf("patch: %v", obj)
	}
	refused(t, c, "patch", sb(map[string]any{"path": "made.txt", "diff": "@@ -1 +1 @@\n-other\n+x\n"}), "does not apply")
	if got := testenv.Git(t, m.Repo.Root, "show", "litterbox/w:notes/a.txt"); got != "1\nTWO\n3" {
		t.Errorf("committed %q", got)
	}

	txt, obj = ok(t, c, "ls", sb(map[string]any{"path": "notes"}))
	if entries, _ := obj["entries"].([]any); len(entries) != 1 || !strings.Contains(txt, "a.txt") {
		t.Errorf("ls: %q %v", txt, obj)
	}
	_, obj = ok(t, c, "glob", sb(map[string]any{"pattern": "**/*.txt"}))
	if paths, _ := obj["paths"].([]any); len(paths) < 2 {
		t.Errorf("glob: %v", obj)
	}
	txt, obj = ok(t, c, "grep", sb(map[string]any{"pattern": "TWO"}))
	if matches, _ := obj["matches"].([]any); len(matches) != 1 || !strings.Contains(txt, "notes/a.txt:2:") {
		t.Errorf("grep: %q %v", txt, obj)
	}
	refused(t, c, "read", sb(map[string]any{"path": ".gitignore"}), "hidden")
	refused(t, c, "read", map[string]any{"sandbox": "nope", "path": "a"}, "nope")
}

// bash, milestones and the diff through the protocol.
func TestMemBashMilestoneDiff(t *testing.T) {
	c, _ := memClient(t)
	ok(t, c, "sandbox-create", map[string]any{"name": "w"})
	txt, obj := ok(t, c, "bash", map[string]any{"sandbox": "w", "command": "echo out; echo err >&2; echo x > x.txt; exit 2"})
	if obj["exit_code"] != float64(2) || obj["stdout"] != "out\n" || obj["stderr"] != "err\n" || obj["snapshot"] == nil || !strings.Contains(txt, "exit code: 2") {
		t.Errorf("bash: %q %v", txt, obj)
	}
	txt, obj = ok(t, c, "bash", map[string]any{"sandbox": "w", "command": "true"})
	if obj["snapshot"] != nil || !strings.Contains(txt, "nothing") {
		t.Errorf("bash that changed nothing: %q %v", txt, obj)
	}
	refused(t, c, "bash", map[string]any{"sandbox": "w", "command": "true", "output_limit": 10}, "output_limit")
	_, obj = ok(t, c, "sandbox-milestone", map[string]any{"sandbox": "w", "message": "x.txt made"})
	if obj["squashed"] != float64(1) {
		t.Errorf("milestone: %v", obj)
	}
	refused(t, c, "sandbox-milestone", map[string]any{"sandbox": "w", "message": "again"}, "nothing")
	ok(t, c, "bash", map[string]any{"sandbox": "w", "command": "echo y > y.txt"})
	txt, obj = ok(t, c, "sandbox-diff", map[string]any{"sandbox": "w", "since": "milestone"})
	if files, _ := obj["files"].([]any); len(files) != 1 || !strings.Contains(txt, "y.txt") || strings.Contains(txt, "x.txt") {
		t.Errorf("diff since the milestone: %q %v", txt, obj)
	}
	_, obj = ok(t, c, "sandbox-diff", map[string]any{"sandbox": "w"})
	if files, _ := obj["files"].([]any); len(files) != 2 {
		t.Errorf("diff since the base: %v", obj)
	}
	_, obj = ok(t, c, "sandbox-ports", map[string]any{"sandbox": "w"})
	if ports, _ := obj["ports"].([]any); len(ports) != 0 {
		t.Errorf("ports of a sandbox with none: %v", obj)
	}
}

// A fork starts from its source's files and is the calling server's to
// use; a scope keeps another client's sandbox out of reach.
func TestMemForkAndScope(t *testing.T) {
	m, _ := sandboxtest.Mem(t, nil)
	ctx := context.Background()
	if _, err := m.Create(ctx, create.CreateOptions{Name: "theirs"}); err != nil {
		t.Fatal(err)
	}
	scope, err := NewScope(false, nil, "test")
	if err != nil {
		t.Fatal(err)
	}
	c := startClient(t, m, scope)
	refused(t, c, "bash", map[string]any{"sandbox": "theirs", "command": "true"}, "theirs")
	ok(t, c, "sandbox-create", map[string]any{"name": "mine"})
	ok(t, c, "write", map[string]any{"sandbox": "mine", "path": "f.txt", "content": "from mine\n"})
	// membox copies no volumes between boxes, as a cluster does not: the
	// fork is refused, and leaves nothing behind.
	refused(t, c, "sandbox-fork", map[string]any{"sandbox": "mine", "name": "copy"}, "not supported")
	_, obj := ok(t, c, "sandbox-list", nil)
	if list, _ := obj["sandboxes"].([]any); len(list) != 1 {
		t.Errorf("the scope lists %v, want mine alone", obj)
	}
	if out := testenv.Git(t, m.Repo.Root, "branch", "--list", "litterbox/copy"); out != "" {
		t.Errorf("the refused fork left its branch: %s", out)
	}
}

// A server for a repository that could not be opened answers the
// handshake and lists its tools, and refuses every call with the reason.
func TestUnavailableRefusesEveryCallWithWhy(t *testing.T) {
	c := clientOf(t, Unavailable("test", io.Discard, errors.New("--repo /nowhere: not a git repository")))
	ctx := context.Background()
	tools, err := c.ListTools(ctx, gomcp.ListToolsRequest{})
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools: %v %v", tools, err)
	}
	refused(t, c, "sandbox-list", nil, "--repo /nowhere: not a git repository")
	refused(t, c, "bash", map[string]any{"sandbox": "w", "command": "true"}, "not a git repository")
}
