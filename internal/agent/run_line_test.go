package agent

import (
	"bufio"
	"io"
	"strings"
	"testing"
)

// TestNextLineTakesAnyLength checks that a line longer than any buffer
// (an agent flooding settle's output) counts as one line, and that the
// stream ends only at its end.
func TestNextLineTakesAnyLength(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("x", 100000)+"\n\x1b]52;c;cHdu\x07\nsettled\ntail"), 16)
	n := 0
	for nextLine(r) == nil {
		n++
	}
	if n != 3 {
		t.Errorf("%d lines, want 3", n)
	}
	if err := nextLine(r); err != io.EOF {
		t.Errorf("after the end: %v, want EOF", err)
	}
}
