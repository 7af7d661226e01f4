package layout

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Every per-sandbox path is under the state directory and names the
// sandbox, so delete removes its own state and nobody else's.
func TestPerSandbox(t *testing.T) {
	l := New("/r/.git")
	for _, p := range l.PerSandbox("a-b") {
		rel, err := filepath.Rel(l.Dir(), p)
		if err != nil || strings.HasPrefix(rel, "..") || !strings.Contains(filepath.Base(p), "a-b") {
			t.Errorf("%s is not slug a-b's state under %s", p, l.Dir())
		}
	}
	if got := l.Record("a-b"); got != "/r/.git/litterbox/sandboxes/a-b.json" {
		t.Errorf("record at %s", got)
	}
	if got := Identity("/r/.git"); got != "/r/.git/litterbox/repo-id.json" {
		t.Errorf("identity at %s", got)
	}
}

// A held session is seen, and refuses a second, until released.
func TestHoldSession(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sessions", "work")
	if h := Session(path); h != nil {
		t.Fatalf("no session yet, but %+v", h)
	}
	since := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	release, other, err := HoldSession(path, Holder{Call: "run: claude", Since: since, PID: 42})
	if err != nil || other != nil {
		t.Fatalf("hold: %v %+v", err, other)
	}
	if h := Session(path); h == nil || h.Call != "run: claude" || h.PID != 42 || !h.Since.Equal(since) {
		t.Fatalf("the held session reads %+v", h)
	}
	if r2, other, err := HoldSession(path, Holder{Call: "run: codex"}); err != nil || r2 != nil || other == nil || other.Call != "run: claude" {
		t.Fatalf("a second hold: %v %+v", err, other)
	}
	release()
	if h := Session(path); h != nil {
		t.Fatalf("released, but %+v", h)
	}
}
