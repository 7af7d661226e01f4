//go:build linux

package helper

import "testing"

// The CPU fields come after the command name, which may hold spaces and
// parentheses.
func TestStatTicks(t *testing.T) {
	for stat, want := range map[string]uint64{
		"42 (sh) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0":              10,
		"7 (a (b) c) R 1 7 7 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 9 9 9 9": 300,
		"garbage":   0,
		"1 (x) S 1": 0,
	} {
		if got := statTicks([]byte(stat)); got != want {
			t.Errorf("statTicks(%q) = %d, want %d", stat, got, want)
		}
	}
}
