//go:build linux

package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// sandbox-sync through the protocol: sandbox-list tells the agent its
// sandbox is behind; the sandbox moves onto the person's new commit, /src
// with it; a conflict comes back as files to
// resolve, with the markers in /src.
func TestMemSync(t *testing.T) {
	c, m := memClient(t)
	ok(t, c, "sandbox-create", map[string]any{"name": "w"})
	ok(t, c, "write", map[string]any{"sandbox": "w", "path": "/src/mine.txt", "content": "one\n"})
	root := m.Repo.Root
	commitOnHost := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		testenv.Git(t, root, "add", name)
		testenv.Git(t, root, "commit", "-q", "-m", "person: "+name)
	}
	commitOnHost("theirs.txt", "theirs\n")
	if txt, _ := ok(t, c, "sandbox-list", map[string]any{}); !strings.Contains(txt, "1 commit(s) behind main, merges cleanly (sandbox-sync brings it up to date)") {
		t.Errorf("sandbox-list does not tell the agent it is behind: %q", txt)
	}
	txt, obj := ok(t, c, "sandbox-sync", map[string]any{"sandbox": "w"})
	if !strings.Contains(txt, "Synced sandbox 'w' onto") || obj["replayed"] != float64(1) {
		t.Errorf("sandbox-sync: %q %v", txt, obj)
	}
	if got, _ := ok(t, c, "read", map[string]any{"sandbox": "w", "path": "/src/theirs.txt"}); !strings.Contains(got, "theirs") {
		t.Errorf("/src after the sync: %q", got)
	}
	if txt, _ := ok(t, c, "sandbox-list", map[string]any{}); strings.Contains(txt, "behind") {
		t.Errorf("sandbox-list after the sync: %q", txt)
	}
	commitOnHost("mine.txt", "person's\n")
	ok(t, c, "write", map[string]any{"sandbox": "w", "path": "/src/mine.txt", "content": "agent's\n"})
	txt, obj = ok(t, c, "sandbox-sync", map[string]any{"sandbox": "w"})
	if !strings.Contains(txt, "Resolve the conflict markers in: mine.txt") {
		t.Errorf("a conflicting sync says %q (%v)", txt, obj)
	}
	if got, _ := ok(t, c, "read", map[string]any{"sandbox": "w", "path": "/src/mine.txt"}); !strings.Contains(got, "<<<<<<< main\n") || !strings.Contains(got, ">>>>>>> litterbox/w\n") {
		t.Errorf("mine.txt after the conflicting sync: %q", got)
	}
}
