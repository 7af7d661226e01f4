package protocol

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// 100,000 new directories of 240-byte names (24 MB) go in frames that each
// fit MaxFrame and join back to the whole; a small Dirs stays one frame.
func TestDirsSplitFitsFramesAndJoinsBack(t *testing.T) {
	whole := &Dirs{Full: true, Read: 100_001, Rules: []RuleFile{{Path: ".gitignore", Data: bytes.Repeat([]byte("x"), MaxRuleFile)}, {Path: "a/.gitignore", Data: []byte{}, Deleted: true}}}
	for i := range 100_000 {
		whole.New = append(whole.New, fmt.Sprintf("d/%s%06d", strings.Repeat("y", 232), i))
	}
	parts := whole.Split()
	if len(parts) < 2 {
		t.Fatalf("%d part(s)", len(parts))
	}
	var joined *Dirs
	for i, p := range parts {
		frame := p.Encode()
		if len(frame) > MaxFrame {
			t.Fatalf("part %d: %d bytes, over %d", i, len(frame), MaxFrame)
		}
		if p.More != (i < len(parts)-1) {
			t.Errorf("part %d of %d: More %v", i, len(parts), p.More)
		}
		got, err := DecodeDirs(frame)
		if err != nil {
			t.Fatal(err)
		}
		if joined == nil {
			joined = got
		} else {
			joined.Join(got)
		}
	}
	if !reflect.DeepEqual(joined, whole) {
		t.Errorf("joined Dirs differs: %d new, %d rules, full %v, read %d", len(joined.New), len(joined.Rules), joined.Full, joined.Read)
	}
	t.Logf("%d names in %d frames", len(whole.New), len(parts))
	if small := (&Dirs{New: []string{"a"}}).Split(); len(small) != 1 || small[0].More {
		t.Errorf("a small Dirs split into %d", len(small))
	}
}

// A helper built before More sends Dirs without it: still read, as one.
func TestDirsWithoutMoreDecodes(t *testing.T) {
	p := (&Dirs{New: []string{"a", "b"}, Read: 3}).Encode()
	got, err := DecodeDirs(p[:len(p)-1])
	if err != nil || got.More || len(got.New) != 2 || got.Read != 3 {
		t.Errorf("%+v %v", got, err)
	}
}
