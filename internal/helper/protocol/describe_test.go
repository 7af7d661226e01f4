package protocol

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// Describe shows a conversation's host side as its messages, the content
// by size and digest.
func TestDescribe(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	_ = w.Frame(TRequest, (&Request{Version: Version, Op: OpWrite, NewGen: 2, Path: "/src/a.txt", ContentLen: 3}).Encode())
	_ = w.Raw(strings.NewReader("hi\n"), 3)
	_ = w.Frame(TPrune, (&Prune{Add: []string{"node_modules"}}).Encode())
	_ = w.Frame(TSelect, (&Select{Paths: []string{"a.txt"}}).Encode())
	_ = w.Flush()
	lines := strings.Split(Describe(b.Bytes()), "\n")
	want := []string{
		`Q {"Version":` + strconv.Itoa(Version) + `,"Op":"write","OldGen":0,"NewGen":2,`,
		"content: 3 bytes, sha256 98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4",
		`P {"Add":["node_modules"],"Expand":[],"Requery":[]}`,
		`S {"Paths":["a.txt"]}`,
		"",
	}
	if len(lines) != len(want) {
		t.Fatalf("got %q", lines)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d: %q, want %q...", i, lines[i], want[i])
		}
	}
	if got := Describe([]byte("Q\x05ab")); !strings.HasPrefix(got, "unreadable: ") {
		t.Errorf("a cut stream: %q", got)
	}
}
