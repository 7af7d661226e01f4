//go:build linux

package mcp

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	gomcp "github.com/mark3labs/mcp-go/mcp"

	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// The review loop through the protocol: the agent marks its work ready, a
// person rejects it, the agent reads the reason at the head of its next
// result (once) and in sandbox-list, and an apply marks the work taken
// until the next commit. Every change of state is in the audit log, and
// delete takes the state with the sandbox.
func TestMemReviewLoop(t *testing.T) {
	c, m := memClient(t)
	ctx := context.Background()
	ok(t, c, "sandbox-create", map[string]any{"name": "w"})
	ok(t, c, "bash", map[string]any{"sandbox": "w", "command": "echo a > a.txt"})
	refused(t, c, "sandbox-ready", map[string]any{"sandbox": "w", "summary": " "}, "summary is empty")
	_, obj := ok(t, c, "sandbox-ready", map[string]any{"sandbox": "w", "summary": "adds a.txt\nchecked by hand"})
	if obj["state"] != "ready" || obj["by"] != "agent" {
		t.Errorf("sandbox-ready: %v", obj)
	}
	if r := reviewOf(t, m, "w"); r.State != "ready" || r.Message != "adds a.txt\nchecked by hand" {
		t.Errorf("list after ready: %+v", r)
	}

	if _, err := m.Reject(ctx, "w", ""); err == nil {
		t.Error("a rejection with no reason was taken")
	}
	if _, err := m.Reject(ctx, "w", "keep a.txt out of the root"); err != nil {
		t.Fatal(err)
	}
	if r := reviewOf(t, m, "w"); r.State != "rejected" || r.By != "person" {
		t.Errorf("list after reject: %+v", r)
	}
	txt, _ := ok(t, c, "read", map[string]any{"sandbox": "w", "path": "a.txt"})
	if !strings.HasPrefix(txt, "A person rejected the work of sandbox 'w': keep a.txt out of the root\n") || !strings.Contains(txt, "a") {
		t.Errorf("the next result after a rejection: %q", txt)
	}
	if txt, _ := ok(t, c, "read", map[string]any{"sandbox": "w", "path": "a.txt"}); strings.Contains(txt, "rejected") {
		t.Errorf("the rejection came again: %q", txt)
	}
	txt, _ = ok(t, c, "sandbox-list", map[string]any{})
	if !strings.Contains(txt, "working (rejected: keep a.txt out of the root)") {
		t.Errorf("sandbox-list after the agent was told: %q", txt)
	}
	if r := reviewOf(t, m, "w"); r.State != "working" || r.Mark != "rejected" {
		t.Errorf("list after the agent was told: %+v", r)
	}

	if _, err := m.Apply(ctx, "w", review.Options{}); err != nil {
		t.Fatal(err)
	}
	if r := reviewOf(t, m, "w"); r.State != "taken" {
		t.Errorf("list after apply: %+v", r)
	}
	ok(t, c, "bash", map[string]any{"sandbox": "w", "command": "echo b > b.txt"})
	if r := reviewOf(t, m, "w"); r.State != "working" || r.Mark != "taken" {
		t.Errorf("list after a commit past the apply: %+v", r)
	}

	data, err := os.ReadFile(m.Repo.AuditPath())
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.Contains(line, `"tool":"review-state"`) {
			_, rest, _ := strings.Cut(line, `"state":"`)
			state, _, _ := strings.Cut(rest, `"`)
			states = append(states, state)
		}
	}
	if strings.Join(states, ",") != "ready,rejected,taken" {
		t.Errorf("the audit log's changes of state: %q", states)
	}
	if _, err := m.Delete(ctx, "w", true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.Repo.Layout().Review("w")); !os.IsNotExist(err) {
		t.Errorf("the review state outlived delete: %v", err)
	}
}

// reviewOf is sandbox name's review as list gives it.
func reviewOf(t *testing.T, m *sandbox.Manager, name string) sandbox.Review {
	t.Helper()
	list, err := m.List(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Name == name && s.Review != nil {
			return *s.Review
		}
	}
	t.Fatalf("list has no review of %s: %+v", name, list)
	return sandbox.Review{}
}

// A reviewer's server (litterbox mcp --review w) lists and runs only the
// tools that read, over w alone; every tool that would change anything is
// refused as a tool result and changes nothing. Its verdict is a mark the
// person sees, and a rejection reaches the agent that works in w, not the
// reviewer.
func TestMemReviewerReadsAndChangesNothing(t *testing.T) {
	agentC, m := memClient(t)
	ok(t, agentC, "sandbox-create", map[string]any{"name": "w"})
	ok(t, agentC, "sandbox-create", map[string]any{"name": "other"})
	ok(t, agentC, "bash", map[string]any{"sandbox": "w", "command": "echo a > a.txt"})
	scope, err := NewReviewScope("w", "test")
	if err != nil {
		t.Fatal(err)
	}
	rev := startClient(t, m, scope)
	tools, err := rev.ListTools(context.Background(), gomcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := slices.Sorted(slices.Values(reviewTools)); !slices.Equal(names, want) {
		t.Errorf("a reviewer is offered %q, want %q", names, want)
	}
	agentTools, _ := agentC.ListTools(context.Background(), gomcp.ListToolsRequest{})
	for _, tool := range agentTools.Tools {
		if tool.Name == "sandbox-review" {
			t.Error("an agent's server offers sandbox-review")
		}
	}

	tip := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/w")
	if txt, _ := ok(t, rev, "read", map[string]any{"sandbox": "w", "path": "a.txt"}); !strings.Contains(txt, "a") {
		t.Errorf("reviewer's read: %q", txt)
	}
	if txt, _ := ok(t, rev, "sandbox-diff", map[string]any{"sandbox": "w"}); !strings.Contains(txt, "a.txt") {
		t.Errorf("reviewer's diff: %q", txt)
	}
	if _, obj := ok(t, rev, "sandbox-list", map[string]any{}); len(obj["sandboxes"].([]any)) != 1 {
		t.Errorf("a reviewer lists %v", obj)
	}
	refused(t, rev, "read", map[string]any{"sandbox": "other", "path": "README.md"}, "not this server's")
	for tool, args := range map[string]map[string]any{
		"bash":              {"sandbox": "w", "command": "echo b > a.txt"},
		"write":             {"sandbox": "w", "path": "a.txt", "content": "b\n"},
		"edit":              {"sandbox": "w", "path": "a.txt", "old_string": "a", "new_string": "b"},
		"patch":             {"sandbox": "w", "path": "a.txt", "diff": "@@ -1 +1 @@\n-a\n+b\n"},
		"sandbox-milestone": {"sandbox": "w", "message": "m"},
		"sandbox-ready":     {"sandbox": "w", "summary": "s"},
		"sandbox-sync":      {"sandbox": "w"},
		"sandbox-create":    {"name": "third"},
		"sandbox-service":   {"sandbox": "w", "action": "status"},
	} {
		refused(t, rev, tool, args, tool+" is refused: this server reviews")
	}
	if now := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/w"); now != tip {
		t.Errorf("the branch moved under a reviewer: %s to %s", tip, now)
	}
	if txt, _ := ok(t, agentC, "read", map[string]any{"sandbox": "w", "path": "a.txt"}); !strings.Contains(txt, "     1\ta") {
		t.Errorf("a.txt after the reviewer: %q", txt)
	}

	refused(t, rev, "sandbox-review", map[string]any{"sandbox": "w", "verdict": "reject", "notes": ""}, "notes are empty")
	_, obj := ok(t, rev, "sandbox-review", map[string]any{"sandbox": "w", "verdict": "reject", "notes": "a.txt needs a heading"})
	if obj["state"] != "rejected" || obj["by"] != "reviewer" {
		t.Errorf("reject: %v", obj)
	}
	if txt, _ := ok(t, rev, "read", map[string]any{"sandbox": "w", "path": "a.txt"}); strings.Contains(txt, "rejected") {
		t.Errorf("the reviewer was told its own rejection: %q", txt)
	}
	if txt, _ := ok(t, agentC, "ls", map[string]any{"sandbox": "w", "path": "."}); !strings.HasPrefix(txt, "Its reviewer rejected the work of sandbox 'w': a.txt needs a heading\n") {
		t.Errorf("the agent's next result: %q", txt)
	}
	ok(t, rev, "sandbox-review", map[string]any{"sandbox": "w", "verdict": "approve", "notes": "fine now"})
	if r := reviewOf(t, m, "w"); r.State != "ready" || r.By != "reviewer" || r.Message != "fine now" {
		t.Errorf("list after approve: %+v", r)
	}
}
