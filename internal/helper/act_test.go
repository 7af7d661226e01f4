package helper

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/manifest"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// sandboxDir points the helper at a temp copy of a repository (and its
// state at a temp dir) for the test, with files in it.
func sandboxDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "src")
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	oldRoot := root
	root = dir
	t.Cleanup(func() { root = oldRoot })
	oldState := manifest.StateDir
	manifest.StateDir = t.TempDir()
	t.Cleanup(func() { manifest.StateDir = oldState })
	return dir
}

// called is what one act call told the host.
type called struct {
	res     *protocol.Result
	stdout  string
	changes map[string]byte   // path -> Changed or Removed
	files   map[string]string // what the host fetched
}

// call plays the host's side of one act call: the request (and content),
// then a scan in which nothing is pruned and every changed file is
// fetched. The helper runs in this process on the temp sandbox.
func call(t *testing.T, req *protocol.Request, content string) called {
	t.Helper()
	req.Version = protocol.Version
	req.ContentLen = uint64(len(content))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	code := make(chan int, 1)
	go func() { code <- act(inR, outW); outW.Close() }()
	w, r := protocol.NewWriter(inW), protocol.NewReader(outR)
	if err := w.Frame(protocol.TRequest, req.Encode()); err != nil {
		t.Fatal(err)
	}
	if p, err := r.Expect(protocol.TBegin); err != nil {
		t.Fatal(err)
	} else if b, err := protocol.DecodeBegin(p); err != nil || b.Between {
		t.Fatalf("begin: %+v %v (no watcher here: nothing between calls)", b, err)
	}
	if content != "" {
		if err := w.Raw(strings.NewReader(content), int64(len(content))); err != nil {
			t.Fatal(err)
		}
	}
	got := called{changes: map[string]byte{}, files: map[string]string{}}
	for got.res == nil {
		typ, p, err := r.Next()
		if err != nil {
			t.Fatalf("before the result: %v", err)
		}
		switch typ {
		case protocol.TStdout:
			got.stdout += string(p)
		case protocol.TCut:
			c, err := protocol.DecodeCut(p)
			if err != nil {
				t.Fatal(err)
			}
			got.stdout += fmt.Sprintf("<%c cut %d>", c.Stream, c.N)
		case protocol.TResult:
			if got.res, err = protocol.DecodeResult(p); err != nil {
				t.Fatal(err)
			}
		case protocol.TFail:
			t.Fatalf("helper failed: %s", p)
		}
	}
	if _, err := r.Expect(protocol.TDirs); err != nil {
		t.Fatal(err)
	}
	if err := w.Frame(protocol.TPrune, (&protocol.Prune{}).Encode()); err != nil {
		t.Fatal(err)
	}
	var fetch []string
	for more := true; more; {
		p, err := r.Expect(protocol.TChanges)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := protocol.DecodeChanges(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ch.List {
			got.changes[c.Path] = c.Op
			if c.Op == protocol.Changed {
				fetch = append(fetch, c.Path)
			}
		}
		more = ch.More
	}
	slices.Sort(fetch)
	if err := w.Frame(protocol.TSelect, (&protocol.Select{Paths: fetch}).Encode()); err != nil {
		t.Fatal(err)
	}
	for range fetch {
		p, err := r.Expect(protocol.TFile)
		if err != nil {
			t.Fatal(err)
		}
		h, err := protocol.DecodeFileHeader(p)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r.Raw(int64(h.Size)))
		if err != nil {
			t.Fatal(err)
		}
		got.files[h.Path] = string(data)
	}
	if _, err := r.Expect(protocol.TEnd); err != nil {
		t.Fatal(err)
	}
	inW.Close()
	if c := <-code; c != 0 {
		t.Fatalf("act exited %d", c)
	}
	return got
}

// The helper's half of the change loop on a host directory: the baseline
// at setup, then each call reports exactly what it changed (added,
// changed, removed; hidden paths too, since git decides on the host) and
// sends what the host selects; a call that changes nothing reports
// nothing.
func TestActReportsChanges(t *testing.T) {
	dir := sandboxDir(t, map[string]string{"README.md": "# r\n", "src/main.go": "package main\n"})

	setup := call(t, &protocol.Request{Op: protocol.OpSetup, OldGen: 0, NewGen: 1, Cap: 1 << 20, Dir: dir, Cmd: "echo ready"}, "")
	if setup.res.ExitCode != 0 || setup.stdout != "ready\n" || len(setup.changes) != 0 {
		t.Fatalf("setup: %+v %q %v", setup.res, setup.stdout, setup.changes)
	}

	w := call(t, &protocol.Request{Op: protocol.OpWrite, OldGen: 1, NewGen: 2, Cap: 1 << 20, Path: dir + "/notes/todo.txt"}, "one\ntwo\n")
	if w.res.ExitCode != 0 || !maps.Equal(w.changes, map[string]byte{"notes/todo.txt": protocol.Changed}) || w.files["notes/todo.txt"] != "one\ntwo\n" {
		t.Fatalf("write: %+v %v %v", w.res, w.changes, w.files)
	}

	b := call(t, &protocol.Request{Op: protocol.OpRun, OldGen: 2, NewGen: 3, Cap: 1 << 20, Dir: dir,
		Cmd: "echo more >> src/main.go && rm README.md && mkdir -p .cache && echo x > .cache/y && echo done"}, "")
	want := map[string]byte{"src/main.go": protocol.Changed, "README.md": protocol.Removed, ".cache/y": protocol.Changed}
	if b.res.ExitCode != 0 || b.stdout != "done\n" || !maps.Equal(b.changes, want) || b.files["src/main.go"] != "package main\nmore\n" {
		t.Fatalf("bash: %+v %q %v %v", b.res, b.stdout, b.changes, b.files)
	}

	rm := call(t, &protocol.Request{Op: protocol.OpRemove, OldGen: 3, NewGen: 4, Cap: 1 << 20, Path: dir + "/notes/todo.txt"}, "")
	if rm.res.ExitCode != 0 || !maps.Equal(rm.changes, map[string]byte{"notes/todo.txt": protocol.Removed}) {
		t.Fatalf("remove: %+v %v", rm.res, rm.changes)
	}

	idle := call(t, &protocol.Request{Op: protocol.OpRun, OldGen: 4, NewGen: 5, Cap: 1 << 20, Dir: dir, Cmd: "cat src/main.go > /dev/null"}, "")
	if idle.res.ExitCode != 0 || len(idle.changes) != 0 {
		t.Fatalf("a call that changes nothing reported %v", idle.changes)
	}

	failed := call(t, &protocol.Request{Op: protocol.OpRun, OldGen: 5, NewGen: 6, Cap: 1 << 20, Dir: dir, Cmd: "echo half > half.txt; exit 3"}, "")
	if failed.res.ExitCode != 3 || failed.files["half.txt"] != "half\n" {
		t.Fatalf("a failing command's changes are reported too: %+v %v", failed.res, failed.files)
	}
}

// A process the kill does not reach (here: outside a sandbox, an orphan
// the host's init adopted) that holds the output open holds the call only
// for drainGrace after the command ends.
func TestActDrainIsBounded(t *testing.T) {
	dir := sandboxDir(t, map[string]string{"README.md": "# r\n"})
	call(t, &protocol.Request{Op: protocol.OpSetup, OldGen: 0, NewGen: 1, Cap: 1 << 20, Dir: dir, Cmd: "true"}, "")
	pidFile := filepath.Join(t.TempDir(), "pid")
	t.Cleanup(func() {
		data, _ := os.ReadFile(pidFile)
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	t0 := time.Now()
	got := call(t, &protocol.Request{Op: protocol.OpRun, OldGen: 1, NewGen: 2, Cap: 1 << 20, Dir: dir,
		Cmd: "setsid sh -c 'sleep 30 & echo $$ $! > " + pidFile + "; wait' & sleep 0.2; echo done"}, "")
	took := time.Since(t0)
	if got.res.ExitCode != 0 || got.stdout != "done\n" {
		t.Fatalf("the call: %+v %q", got.res, got.stdout)
	}
	if took < drainGrace || took > drainGrace+2*time.Second {
		t.Errorf("the call took %v, want about %v (the drain's bound)", took, drainGrace)
	}
}

// Output past the cap: the first half is sent, then a cut counting what is
// left out, then the last half, where test runners print their summary;
// the whole stream is saved in the sandbox. Output within the cap is sent
// whole and saved nowhere.
func TestActKeepsHeadAndTail(t *testing.T) {
	sandboxDir(t, map[string]string{"a": ""})
	old := outDir
	outDir = filepath.Join(t.TempDir(), "out")
	t.Cleanup(func() { outDir = old })
	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	got := call(t, &protocol.Request{Op: protocol.OpRun, Dir: root, Cmd: "seq 1 100000", Cap: 1000}, "")
	total := uint64(want.Len())
	if got.res.OutCut != total-1000 {
		t.Errorf("cut %d bytes, want %d", got.res.OutCut, total-1000)
	}
	head, tail := want.String()[:500], want.String()[want.Len()-500:]
	if w := head + fmt.Sprintf("<o cut %d>", total-1000) + tail; got.stdout != w {
		t.Errorf("sent %q...%q, want %q...%q", got.stdout[:40], got.stdout[len(got.stdout)-40:], w[:40], w[len(w)-40:])
	}
	saved, err := os.ReadFile(got.res.OutLog)
	if err != nil || string(saved) != want.String() || got.res.OutLogPart {
		t.Errorf("saved %q (%d bytes, part %v), %v; want the whole stream", got.res.OutLog, len(saved), got.res.OutLogPart, err)
	}
	if !strings.HasSuffix(got.res.OutLog, ".stdout") || got.res.ErrLog != "" {
		t.Errorf("logs %q and %q", got.res.OutLog, got.res.ErrLog)
	}

	small := call(t, &protocol.Request{Op: protocol.OpRun, Dir: root, Cmd: "seq 1 300", Cap: 2000}, "")
	if small.res.OutCut != 0 || small.res.OutLog != "" || small.stdout != want.String()[:len(small.stdout)] || !strings.HasSuffix(small.stdout, "\n300\n") {
		t.Errorf("within the cap: cut %d, log %q, sent %q", small.res.OutCut, small.res.OutLog, small.stdout)
	}
}

// With Stream every byte is sent as it comes, and a long stream is still
// saved for the agent.
func TestActStreamSendsAllAndSaves(t *testing.T) {
	sandboxDir(t, map[string]string{"a": ""})
	old := outDir
	outDir = filepath.Join(t.TempDir(), "out")
	t.Cleanup(func() { outDir = old })
	got := call(t, &protocol.Request{Op: protocol.OpRun, Dir: root, Cmd: "seq 1 20000", Cap: 1000, Stream: true}, "")
	if got.res.OutCut != 0 || !strings.HasPrefix(got.stdout, "1\n2\n") || !strings.HasSuffix(got.stdout, "\n19999\n20000\n") || strings.Contains(got.stdout, "cut") {
		t.Errorf("streamed %d bytes, cut %d", len(got.stdout), got.res.OutCut)
	}
	if saved, err := os.ReadFile(got.res.OutLog); err != nil || string(saved) != got.stdout {
		t.Errorf("saved %d bytes in %q: %v", len(saved), got.res.OutLog, err)
	}
}

// The saved streams do not pile up in the sandbox's tmpfs: the oldest go,
// and a planted name is not written through.
func TestSavedOutputIsBounded(t *testing.T) {
	dir := t.TempDir()
	for i := range 30 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("2026%04d.stdout", i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	pruneSaved(dir, 19)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 20 || entries[0].Name() != "20260011.stdout" {
		t.Errorf("left %d entries, first %s", len(entries), entries[0].Name())
	}
	old := outDir
	outDir = dir
	t.Cleanup(func() { outDir = old })
	target := filepath.Join(t.TempDir(), "target")
	if err := os.Symlink(target, filepath.Join(dir, "x.stdout")); err != nil {
		t.Fatal(err)
	}
	c := newCapture(10, "x.stdout")
	c.add([]byte("more than ten bytes of output"))
	c.end()
	if p, _ := c.savedAs(); p != "" {
		t.Errorf("saved through a planted link as %q", p)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Error("the link's target was written")
	}
}

// An edit is one call: the file read, the edits applied in order and the
// file written, its change reported by the same call's scan; an edit that
// does not apply, of a file missing or too large, changes nothing and
// says where it stopped.
func TestActEdits(t *testing.T) {
	dir := sandboxDir(t, map[string]string{"a.go": "one\ntwo\nthree\ntwo\n", "big.txt": "0123456789"})
	call(t, &protocol.Request{Op: protocol.OpSetup, OldGen: 0, NewGen: 1, Cap: 1 << 20, Dir: dir}, "")
	edit := func(gen uint64, p string, max uint64, list ...protocol.Edit) called {
		t.Helper()
		content := (&protocol.Edits{Max: max, MaxOut: 20, List: list}).Encode()
		return call(t, &protocol.Request{Op: protocol.OpEdit, OldGen: gen, NewGen: gen + 1, Cap: 1 << 20, Path: dir + "/" + p}, string(content))
	}
	ok := edit(1, "a.go", 1<<20, protocol.Edit{Old: "one", New: "1"}, protocol.Edit{Old: "two", New: "2", All: true})
	if ok.res.ExitCode != 0 || ok.res.Replaced != 3 || !maps.Equal(ok.changes, map[string]byte{"a.go": protocol.Changed}) || ok.files["a.go"] != "1\n2\nthree\n2\n" {
		t.Fatalf("edit: %+v %v %q", ok.res, ok.changes, ok.files)
	}
	for _, c := range []struct {
		name string
		p    string
		max  uint64
		list []protocol.Edit
		code int
		err  string
	}{
		{"an old string not there", "a.go", 1 << 20, []protocol.Edit{{Old: "three", New: "3"}, {Old: "four", New: "4"}}, protocol.EditMissed, "edit 2 of 2: old_string not found"},
		{"an old string twice", "a.go", 1 << 20, []protocol.Edit{{Old: "2", New: "two"}}, protocol.EditRefused, "old_string occurs 2 times"},
		{"no such file", "gone.go", 1 << 20, []protocol.Edit{{Old: "a", New: "b"}}, protocol.EditMissing, "no such file"},
		{"a directory", ".", 1 << 20, []protocol.Edit{{Old: "a", New: "b"}}, protocol.EditReadFailed, "is a directory"},
		{"over the bound", "big.txt", 5, []protocol.Edit{{Old: "0", New: "b"}}, protocol.EditReadFailed, "file larger than 5 bytes"},
		{"over the bound once edited", "big.txt", 1 << 20, []protocol.Edit{{Old: "0", New: "0123456789abc"}}, protocol.EditOverMax, "22 bytes"},
	} {
		got := edit(2, c.p, c.max, c.list...)
		size := uint64(0) // what Replaced says: an edit over the bound gives the size
		if c.code == protocol.EditOverMax {
			size = 22
		}
		if got.res.ExitCode != c.code || !strings.Contains(got.res.Err, c.err) || len(got.changes) != 0 || got.res.Replaced != size {
			t.Errorf("%s: %+v %v, want exit %d and %q, nothing changed", c.name, got.res, got.changes, c.code, c.err)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "a.go")); string(data) != "1\n2\nthree\n2\n" {
		t.Errorf("a refused edit changed the file: %q", data)
	}
}

// A file the host asks for is read through a root of /src: a directory
// of its path swapped for a link to a directory outside, between the
// scan's listing and the send, sends the file as missing, not what the
// link leads to.
func TestSendFileReadsNothingALinkLeadsOutTo(t *testing.T) {
	dir := sandboxDir(t, map[string]string{"a/f": "mine\n"})
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "f"), []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := &session{out: protocol.NewWriter(&out)}
	if err := s.sendFiles([]string{"a/f"}, manifest.New(nil)); err != nil {
		t.Fatal(err)
	}
	p, err := protocol.NewReader(bytes.NewReader(out.Bytes())).Expect(protocol.TFile)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := protocol.DecodeFileHeader(p); err != nil || !h.Missing || strings.Contains(out.String(), "outside") {
		t.Errorf("a/f through a link out of /src: %+v %v, sent %q", h, err, out.String())
	}
}
