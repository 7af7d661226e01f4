package protocol

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// Names git can track but a line-based protocol cannot carry.
var oddNames = []string{"a\nb", "tab\there", "\xff\xfenot-utf8", "-leading-dash", "sp ace/ dir", strings.Repeat("x", 4096)}

func TestRoundTrips(t *testing.T) {
	req := &Request{Version: Version, Op: OpRun, OldGen: 3, NewGen: 4, Cap: 1 << 18, Stream: true, TimeoutMS: 1500,
		Dir: "/src/a\nb", Cmd: "echo 'hi'\n", Path: "", ContentLen: 7, Prune: oddNames, MaxFile: 50 << 20, Measure: true, Rescan: true}
	if got, err := DecodeRequest(req.Encode()); err != nil || !reflect.DeepEqual(got, req) {
		t.Errorf("request: %+v %v", got, err)
	}
	res := &Result{ExitCode: -1, TimedOut: true, Cancelled: true, OutCut: 9, ErrCut: 1 << 40, NoShell: true, Err: "no\x00pe",
		OutLog: "/tmp/litterbox/out/a.stdout", ErrLog: "", OutLogPart: true, Replaced: 1 << 33}
	if got, err := DecodeResult(res.Encode()); err != nil || !reflect.DeepEqual(got, res) {
		t.Errorf("result: %+v %v", got, err)
	}
	eds := &Edits{Max: 1 << 40, List: []Edit{{Old: "a\x00b", New: "", All: true}, {Old: "x", New: "y\nz"}}}
	if got, err := DecodeEdits(eds.Encode()); err != nil || !reflect.DeepEqual(got, eds) {
		t.Errorf("edits: %+v %v", got, err)
	}
	for _, b := range []*Begin{{}, {Between: true}} {
		if got, err := DecodeBegin(b.Encode()); err != nil || !reflect.DeepEqual(got, b) {
			t.Errorf("begin: %+v %v", got, err)
		}
	}
	cut := &Cut{Stream: TStderr, N: 1 << 33}
	if got, err := DecodeCut(cut.Encode()); err != nil || !reflect.DeepEqual(got, cut) {
		t.Errorf("cut: %+v %v", got, err)
	}
	if _, err := DecodeCut((&Cut{Stream: TResult, N: 1}).Encode()); err == nil {
		t.Error("a cut of a frame type that is no stream decoded")
	}
	dirs := &Dirs{Full: true, New: oddNames, Rules: []RuleFile{{Path: ".gitignore", Data: []byte("*\n")}, {Path: "a\nb/.gitignore", Deleted: true, Data: []byte{}}}}
	if got, err := DecodeDirs(dirs.Encode()); err != nil || !reflect.DeepEqual(got, dirs) {
		t.Errorf("dirs: %+v %v", got, err)
	}
	pr := &Prune{Add: []string{"node_modules"}, Expand: []string{}, Requery: []string{""}}
	if got, err := DecodePrune(pr.Encode()); err != nil || !reflect.DeepEqual(got, pr) {
		t.Errorf("prune: %+v %v", got, err)
	}
	var ch Changes
	for i, n := range oddNames {
		ch.List = append(ch.List, Change{Op: Changed, Mode: 0o100755, Size: uint64(i), ID: [20]byte{byte(i)}, Path: n})
	}
	ch.List = append(ch.List, Change{Op: Removed, Path: "gone"}, Change{Op: Listed, Path: "kept"})
	ch.More = true
	if got, err := DecodeChanges(ch.Encode()); err != nil || !reflect.DeepEqual(got, &ch) {
		t.Errorf("changes: %+v %v", got, err)
	}
	end := &End{Files: 1 << 40, Counted: true, Pruned: 7, PrunedKnown: true}
	if got, err := DecodeEnd(end.Encode()); err != nil || !reflect.DeepEqual(got, end) {
		t.Errorf("end: %+v %v", got, err)
	}
	fh := &FileHeader{Path: "a\nb", Mode: 0o120777, Link: "../x", Size: 0}
	if got, err := DecodeFileHeader(fh.Encode()); err != nil || !reflect.DeepEqual(got, fh) {
		t.Errorf("file header: %+v %v", got, err)
	}
}

// PID 1 runs the helper of the sandbox's start, which may be older than the
// helper of a call: the watch socket's messages read either way.
func TestWatchMessagesAcrossHelperVersions(t *testing.T) {
	cut := &WatchCut{Old: 1, New: 2, Prune: []string{"node_modules"}}
	older := cut.Encode() // what an older helper sends, and reads
	if d := (dec{b: older}); d.bool() != false || d.uint() != 1 || d.uint() != 2 || len(d.strs()) != 1 || d.done() != nil {
		t.Errorf("a cut without Measure is not the older form: %x", older)
	}
	cut.Measure = true
	if got, err := DecodeWatchCut(cut.Encode()); err != nil || !reflect.DeepEqual(got, cut) {
		t.Errorf("cut: %+v %v", got, err)
	}
	peek := &WatchCut{Prune: []string{}, Peek: true}
	if got, err := DecodeWatchCut(peek.Encode()); err != nil || !reflect.DeepEqual(got, peek) {
		t.Errorf("peek: %+v %v", got, err)
	}
	// An older PID 1 reads the Measure and stops at the Peek: an error,
	// so it does not answer a question it would take for a cut.
	if d := (dec{b: peek.Encode()}); d.bool() || d.uint() != 0 || d.uint() != 0 || len(d.strs()) != 0 || d.bool() || d.done() == nil {
		t.Errorf("an older PID 1 would take a peek for a cut: %x", peek.Encode())
	}
	oldDirty := (&enc{})
	oldDirty.bool(true)
	oldDirty.strs([]string{"a"})
	oldDirty.str("")
	if got, err := DecodeWatchDirty(oldDirty.b); err != nil || !got.Valid || got.PrunedKnown {
		t.Errorf("an older PID 1's answer: %+v %v", got, err)
	}
	dirty := &WatchDirty{Valid: true, Dirs: []string{"a"}, Pruned: 5, PrunedKnown: true}
	if got, err := DecodeWatchDirty(dirty.Encode()); err != nil || !reflect.DeepEqual(got, dirty) {
		t.Errorf("dirty: %+v %v", got, err)
	}
}

// A request of another version decodes to just its version, so the helper
// can say which it speaks instead of failing to parse.
func TestRequestOfAnotherVersion(t *testing.T) {
	var e enc
	e.uint(Version + 1)
	e.str("something new")
	got, err := DecodeRequest(e.b)
	if err != nil || got.Version != Version+1 || got.Op != "" {
		t.Errorf("got %+v %v", got, err)
	}
}

func TestFramesAndRaw(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	if err := w.Frame(TStdout, []byte("out")); err != nil {
		t.Fatal(err)
	}
	if err := w.Frame(TFile, (&FileHeader{Path: "f", Mode: ModeRegular | 0o644, Size: 5}).Encode()); err != nil {
		t.Fatal(err)
	}
	if err := w.Raw(strings.NewReader("hello"), 5); err != nil {
		t.Fatal(err)
	}
	if err := w.Frame(TEnd, nil); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&b)
	if typ, p, err := r.Next(); err != nil || typ != TStdout || string(p) != "out" {
		t.Fatalf("first frame %q %q %v", typ, p, err)
	}
	p, err := r.Expect(TFile)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := DecodeFileHeader(p)
	data, _ := io.ReadAll(r.Raw(int64(h.Size)))
	if string(data) != "hello" {
		t.Errorf("raw %q", data)
	}
	if _, err := r.Expect(TEnd); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("end of stream: %v", err)
	}
}

func TestFailFrameIsAnError(t *testing.T) {
	var b bytes.Buffer
	_ = NewWriter(&b).Frame(TFail, []byte("disk full"))
	_, err := NewReader(&b).Expect(TChanges)
	var fe *FailError
	if !errors.As(err, &fe) || fe.Msg != "disk full" {
		t.Errorf("got %v", err)
	}
}

func TestHostileFrames(t *testing.T) {
	for name, in := range map[string][]byte{
		"huge length":   append([]byte{TChanges}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01),
		"cut short":     {TStdout, 10, 'a'},
		"no length":     {TStdout},
		"bad uvarint":   {TStdout, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80},
		"length beyond": {TStdout, 5, 'a', 'b'},
	} {
		if _, _, err := NewReader(bytes.NewReader(in)).Next(); err == nil || errors.Is(err, io.EOF) {
			t.Errorf("%s: got %v, want a frame error", name, err)
		}
	}
	// A list claiming more elements than bytes left allocates nothing.
	var e enc
	e.bool(false)
	e.uint(1 << 40)
	if _, err := DecodeChanges(e.b); err == nil {
		t.Error("oversized change count accepted")
	}
	if _, err := DecodeChanges(append((&Changes{List: []Change{{Op: 'x', Path: "p"}}}).Encode(), 0)); err == nil {
		t.Error("bad op or trailing bytes accepted")
	}
}

// Every decoder takes any bytes from a hostile helper: an error or a value,
// never a panic, and a value whose encoding decodes to the same value.
func FuzzDecoders(f *testing.F) {
	f.Add((&Changes{List: []Change{{Op: Changed, Mode: 0o100644, Path: "a\nb"}}}).Encode())
	f.Add((&Dirs{New: []string{"x"}, Rules: []RuleFile{{Path: ".gitignore", Data: []byte("*")}}}).Encode())
	f.Add((&FileHeader{Path: "f", Size: 3}).Encode())
	f.Add((&Result{ExitCode: 3}).Encode())
	f.Add((&Cut{Stream: TStdout, N: 5}).Encode())
	f.Add((&Call{Env: []string{"A=1", "TOKEN=x"}}).Encode())
	f.Add((&Done{Code: 99, Stderr: "wrong version"}).Encode())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		if m, err := DecodeCall(p); err == nil {
			if again, err := DecodeCall(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Errorf("call does not round-trip: %x", p)
			}
		}
		if m, err := DecodeDone(p); err == nil {
			if again, err := DecodeDone(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Errorf("done does not round-trip: %x", p)
			}
		}
		if m, err := DecodeChanges(p); err == nil {
			if again, err := DecodeChanges(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Errorf("changes do not round-trip: %x", p)
			}
		}
		if m, err := DecodeDirs(p); err == nil {
			if again, err := DecodeDirs(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Errorf("dirs do not round-trip: %x", p)
			}
		}
		if m, err := DecodeFileHeader(p); err == nil {
			if again, err := DecodeFileHeader(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Errorf("file header does not round-trip: %x", p)
			}
		}
		if m, err := DecodeCut(p); err == nil {
			if again, err := DecodeCut(m.Encode()); err != nil || !reflect.DeepEqual(again, m) {
				t.Errorf("cut does not round-trip: %x", p)
			}
		}
		_, _ = DecodeResult(p)
		_, _ = DecodeBegin(p)
		_, _ = DecodeEnd(p)
		_, _ = DecodeWatchCut(p)
		_, _ = DecodeWatchDirty(p)
		_, _ = DecodePrune(p)
		_, _ = DecodeSelect(p)
		_, _ = DecodeRequest(p)
		_, _ = DecodeEdits(p)
	})
}

// The frame reader takes any stream: frames or an error, never a panic or
// an allocation beyond MaxFrame.
func FuzzFrameReader(f *testing.F) {
	var b bytes.Buffer
	w := NewWriter(&b)
	_ = w.Frame(TStdout, []byte("x"))
	_ = w.Frame(TEnd, nil)
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data))
		for range 100 {
			if _, _, err := r.Next(); err != nil {
				return
			}
		}
	})
}

// A kept stream's reader ends each call at its TDone as at EOF, for Next,
// Expect and Raw, keeps that frame's payload, and reads the next call's
// frames once told to end at the next TDone.
func TestReaderEndAt(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	for _, f := range []struct {
		t byte
		p string
	}{{TBegin, ""}, {TDone, "first"}, {TStdout, "raw follows"}, {TDone, "second"}} {
		if err := w.Frame(f.t, []byte(f.p)); err != nil {
			t.Fatal(err)
		}
	}
	r := NewReader(&b)
	r.EndAt(TDone)
	if typ, _, err := r.Next(); err != nil || typ != TBegin {
		t.Fatalf("%q %v", typ, err)
	}
	for range 2 {
		if _, _, err := r.Next(); err != io.EOF {
			t.Fatalf("at the TDone: %v, want EOF", err)
		}
	}
	if _, err := r.Expect(TStdout); err == nil {
		t.Error("Expect read past the TDone")
	}
	if n, _ := io.Copy(io.Discard, r.Raw(5)); n != 0 {
		t.Errorf("Raw read %d bytes past the TDone", n)
	}
	if p, ended := r.Ended(); !ended || string(p) != "first" {
		t.Errorf("ended %v with %q", ended, p)
	}
	r.EndAt(TDone)
	if _, ended := r.Ended(); ended {
		t.Error("EndAt kept the last call's end")
	}
	if typ, p, err := r.Next(); err != nil || typ != TStdout || string(p) != "raw follows" {
		t.Fatalf("%q %q %v", typ, p, err)
	}
	if _, _, err := r.Next(); err != io.EOF {
		t.Fatal(err)
	}
	if p, _ := r.Ended(); string(p) != "second" {
		t.Errorf("second end %q", p)
	}
}
