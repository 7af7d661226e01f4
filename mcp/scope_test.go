package mcp

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestScopeTakesUpItsClientsSandboxes: a server started again for the
// client that made a sandbox acts on it and lists it; a server of another
// client, or of a client that gave no name, does not; a person's
// sandbox (no client) is no client's.
func TestScopeTakesUpItsClientsSandboxes(t *testing.T) {
	records := map[string]string{"a": "claude-code", "b": "codex", "c": ""}
	newScope := func(client string) *Scope {
		s, err := NewScope(false, nil, client)
		if err != nil {
			t.Fatal(err)
		}
		s.clients = func() map[string]string { return records }
		return s
	}
	ctx := context.Background()
	claude := newScope("claude-code")
	if !claude.allows(ctx, "a") || claude.allows(ctx, "b") || claude.allows(ctx, "c") {
		t.Errorf("claude-code's server: a %v, b %v, c %v; want only a", claude.allows(ctx, "a"), claude.allows(ctx, "b"), claude.allows(ctx, "c"))
	}
	if got := claude.list(ctx); !slices.Equal(got, []string{"a"}) {
		t.Errorf("claude-code's list %q, want a", got)
	}
	if err := claude.refusal(ctx, "b").Error(); !strings.Contains(err, "its client (claude-code) made") || !strings.Contains(err, "(it has: a)") {
		t.Errorf("refusal: %s", err)
	}
	// A client with no name owns nothing, not the person's sandboxes.
	if anon := newScope(""); anon.allows(ctx, "c") || len(anon.list(ctx)) != 0 {
		t.Errorf("a nameless client reaches %q", anon.list(ctx))
	}
	if long := newScope(strings.Repeat("x", 300)); len(long.Client) != maxClient {
		t.Errorf("a client's name is kept at %d bytes", len(long.Client))
	}
}
