package present

import (
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// A sync's line names conflicting files an agent chose inert, at most five.
func TestSyncedIsInert(t *testing.T) {
	s := &sandbox.Synced{Name: "w", Onto: strings.Repeat("a", 40), OntoName: "main", To: strings.Repeat("b", 40), Replayed: 2,
		Conflicts: []string{"a\x1b[2J.txt", "b", "c", "d", "e", "f\nforged line"}}
	got := Synced(s)
	if strings.ContainsAny(got, "\x1b\n") {
		t.Errorf("control characters in %q", got)
	}
	want := `Synced sandbox 'w' onto main (aaaaaaaaaaaa): 2 commit(s) replayed; litterbox/w is at bbbbbbbbbbbb. Conflicts in "a\x1b[2J.txt", b, c, d, e, and 1 more: committed with their markers, and so in /src.`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
