package result

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/litterbox-dev/litterbox/internal/snapshot"
)

// The note for a path the host cannot store names it by its ends, escaped,
// and says how to get past it, on one line.
func TestPathNoteNamesThePathAndTheWayOut(t *testing.T) {
	p := strings.Repeat("é", 2000) + "/\x1b[2Jtail"
	note := Bounds{Withheld: []snapshot.Withheld{{Path: p, Limit: snapshot.LimitPath, Max: 4000}}}.Notes()
	if len(note) != 1 {
		t.Fatalf("notes %q", note)
	}
	n := note[0]
	for _, want := range []string{"is a path of 4009 bytes", "4000 bytes here", "Delete or rename it in the sandbox", ".gitignore", `\x1b[2Jtail`} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if strings.ContainsAny(n, "\x1b\n") || !utf8.ValidString(n) || len(n) > 600 {
		t.Errorf("note of %d bytes is not one short printable line: %q", len(n), n)
	}
}

// Sizes are whole bytes under a KiB, then one decimal in the largest unit
// that keeps the number at least 1.
func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 50 << 20: "50.0 MiB", 3 << 30: "3.0 GiB", 1 << 50: "1.0 PiB", 1 << 60: "1024.0 PiB"} {
		if got := HumanSize(n); got != want {
			t.Errorf("HumanSize(%d) = %q, want %q", n, got, want)
		}
	}
}
