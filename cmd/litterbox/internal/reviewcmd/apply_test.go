package reviewcmd

import (
	"strings"
	"testing"
)

// The LFS pointers apply names are paths the agent chose: printed with
// their control characters escaped, ten and a count at most.
func TestShownPathsAreInert(t *testing.T) {
	got := shownPaths([]string{"a\x1b]52;c;aGk=\x07b.bin", "ok.bin"}, 10)
	if strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, "ok.bin") {
		t.Errorf("shown as %q", got)
	}
	many := make([]string, 25)
	for i := range many {
		many[i] = "p.bin"
	}
	if got := shownPaths(many, 10); strings.Count(got, "p.bin") != 10 || !strings.HasSuffix(got, "and 15 more") {
		t.Errorf("25 paths shown as %q", got)
	}
}
