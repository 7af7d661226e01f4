package agenttext

import (
	"math"
	"strings"
	"testing"
)

func TestInert(t *testing.T) {
	in := "\x1b]52;c;aGk=\x07\x1b[2J ok\n\té \u009b2J\x7f\xff"
	want := `\x1b]52;c;aGk=\x07\x1b[2J ok` + "\n\t" + `é \u009b2J\x7f\xff`
	if got := Inert(in); got != want {
		t.Errorf("Inert(%q) = %q, want %q", in, got, want)
	}
}

// A cut never splits a character, and a noted cut says what was cut.
func TestCap(t *testing.T) {
	s := strings.Repeat("é", MaxMessage)
	if got := Cap(s, 5); got != "éé" {
		t.Errorf("Cap = %q", got)
	}
	if got := CapNoted(s); !strings.HasPrefix(got, Cap(s, MaxMessage)+" ...(cut: 8192 bytes in all, sha256 ") {
		t.Errorf("CapNoted = %q", got[len(got)-100:])
	}
	if got := Elide("abcdefghij", 4); got != "ab...ij" {
		t.Errorf("Elide = %q", got)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1726771: "1,726,771", -1234567: "-1,234,567", math.MinInt64: "-9,223,372,036,854,775,808"} {
		if got := Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
