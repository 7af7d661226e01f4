//go:build linux

package inotify

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// A peek tells what changed since the manifest the host committed last,
// cutting nothing: changes since the last cut, and those of a cut the host
// never committed past (its commit failed); a restarted watcher cannot
// tell, and says why.
func TestPeek(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	w := New(root)
	if d := w.peek(&protocol.WatchCut{Old: 0}); d.Valid || d.Reason == "" {
		t.Fatalf("a new watcher: %+v", d)
	}
	w.cut(&protocol.WatchCut{Reset: true, New: 1})
	if d := w.peek(&protocol.WatchCut{Old: 1}); !d.Valid || len(d.Dirs) != 0 {
		t.Fatalf("nothing changed: %+v", d)
	}
	write := func(p string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/f")
	if d := w.peek(&protocol.WatchCut{Old: 1}); !d.Valid || !slices.Equal(d.Dirs, []string{"a"}) {
		t.Fatalf("after a write: %+v", d)
	}
	// A peek cuts nothing: the scan still sees the change.
	if d := w.cut(&protocol.WatchCut{Old: 1, New: 2}); !d.Valid || !slices.Contains(d.Dirs, "a") {
		t.Fatalf("the cut after a peek: %+v", d)
	}
	// The host did not commit generation 2: its changes are news still.
	if d := w.peek(&protocol.WatchCut{Old: 1}); !d.Valid || !slices.Equal(d.Dirs, []string{"a"}) {
		t.Errorf("an uncommitted cut: %+v", d)
	}
	if d := w.peek(&protocol.WatchCut{Old: 2}); !d.Valid || len(d.Dirs) != 0 {
		t.Errorf("committed: %+v", d)
	}
}

// The other volumes count toward what a cut reports, as measured, even
// with no skipped directory in /src.
func TestVolumesCount(t *testing.T) {
	root, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "big"), make([]byte, 5000), 0o644); err != nil {
		t.Fatal(err)
	}
	w := New(root)
	w.CountVolumes([]string{home})
	if got := w.prunedTotal(); got != 0 {
		t.Fatalf("before measuring: %d", got)
	}
	w.measureVolumes()
	if got := w.cut(&protocol.WatchCut{Reset: true, New: 1}).Pruned; got != 5000 {
		t.Fatalf("a cut reports %d bytes, want the home's 5000", got)
	}
}
