package layout

import (
	"path/filepath"
	"strings"
	"testing"
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
