//go:build linux

package inotify

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"syscall"
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

// A cut whose answer never reached its scan (the scan gave up, or died)
// makes the next cut ask for a full scan: the changes it closed under the
// scan's generation, among them any the next call made before it ended,
// were never read. So does one the scan read but never said it had.
func TestCutNotDeliveredMeansAFullScan(t *testing.T) {
	for _, tc := range []struct {
		name string
		read bool // the scan reads the answer before it goes
	}{{"gone before the answer", false}, {"gone before saying it has the answer", true}} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			w := New(root)
			w.cut(&protocol.WatchCut{Reset: true, New: 1})
			client, done := ask(w, &protocol.WatchCut{Old: 1, New: 2})
			r := protocol.NewReader(client)
			if _, err := r.Expect(protocol.TPong); err != nil {
				t.Fatal(err)
			}
			if tc.read {
				if _, err := r.Expect(protocol.TResult); err != nil {
					t.Fatal(err)
				}
			}
			client.Close()
			<-done
			if err := os.WriteFile(filepath.Join(root, "later.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			if d := w.cut(&protocol.WatchCut{Old: 2, New: 3}); d.Valid || d.Reason == "" {
				t.Errorf("the cut after an undelivered one: %+v, want a full scan with a reason", d)
			}
			// A delivered cut leaves the watcher vouching again.
			if err := os.WriteFile(filepath.Join(root, "last.txt"), []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The scan's own side of the conversation (converse, as Ask has it).
			server, client := net.Pipe()
			done = make(chan struct{})
			go func() { w.answer(server); close(done) }()
			if d := converse(client, &protocol.WatchCut{Old: 3, New: 4}); !d.Valid || !slices.Equal(d.Dirs, []string{""}) {
				t.Errorf("a delivered cut: %+v, want the top directory", d)
			}
			<-done
			client.Close()
			if d := w.cut(&protocol.WatchCut{Old: 4, New: 5}); !d.Valid || len(d.Dirs) != 0 {
				t.Errorf("the cut after a delivered one: %+v, want nothing changed", d)
			}
		})
	}
}

// ask sends PID 1's watcher w the question c over a pipe, answered in the
// background until done closes.
func ask(w *Watcher, c *protocol.WatchCut) (client net.Conn, done chan struct{}) {
	server, client := net.Pipe()
	done = make(chan struct{})
	go func() { w.answer(server); close(done) }()
	go protocol.NewWriter(client).Frame(protocol.TRequest, c.Encode())
	return client, done
}

// After inotify's queue overflowed, the directories whose creation was
// lost with it are watched too once the full scan is asked for: a file
// written in one later is news to the next cut.
func TestOverflowWatchesWhatItLost(t *testing.T) {
	root := t.TempDir()
	w := New(root)
	w.cut(&protocol.WatchCut{Reset: true, New: 1})
	if err := os.Mkdir(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The kernel drops the queue when it overflows: read it unseen.
	buf := make([]byte, 64<<10)
	if n, err := syscall.Read(w.fd, buf); err != nil || n <= 0 {
		t.Fatalf("no event queued for d: %d %v", n, err)
	}
	w.event(-1, syscall.IN_Q_OVERFLOW, "")
	if d := w.cut(&protocol.WatchCut{Old: 1, New: 2}); d.Valid || d.Reason == "" {
		t.Fatalf("the cut after an overflow: %+v, want a full scan with a reason", d)
	}
	if err := os.WriteFile(filepath.Join(root, "d", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := w.cut(&protocol.WatchCut{Old: 2, New: 3}); !d.Valid || !slices.Contains(d.Dirs, "d") {
		t.Errorf("a write in a directory made during the overflow: %+v, want d changed", d)
	}
}

// PID 1's working directory is /src: the watcher names directories to
// the kernel relative to it (an absolute lookup costs a FUSE root's
// daemon), and still sees what changes in them and in new ones.
func TestWatcherInItsRootNamesPathsRelatively(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	w := New(root)
	if !w.inRoot || w.path("") != "." || w.path("a/b") != "a/b" {
		t.Fatalf("in its root the watcher names %q and %q (in root %v)", w.path(""), w.path("a/b"), w.inRoot)
	}
	w.cut(&protocol.WatchCut{Reset: true, New: 1})
	write := func(p string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(root, p), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a/b/f")
	if err := os.Mkdir(filepath.Join(root, "a", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	d := w.cut(&protocol.WatchCut{Old: 1, New: 2})
	slices.Sort(d.Dirs)
	if !d.Valid || !slices.Equal(d.Dirs, []string{"a", "a/b", "a/c"}) {
		t.Fatalf("after a write in a/b and a new a/c: %+v", d)
	}
	write("a/c/g")
	if d := w.cut(&protocol.WatchCut{Old: 2, New: 3}); !d.Valid || !slices.Equal(d.Dirs, []string{"a/c"}) {
		t.Errorf("after a write in the new a/c: %+v", d)
	}
}
