//go:build linux

package helper

import (
	"testing"

	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// The CPU fields come after the command name, which may hold spaces and
// parentheses; a line that cannot be read counts nothing.
func TestStatTicks(t *testing.T) {
	for stat, want := range map[string]uint64{
		"42 (sh) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 0 0 20 0 1 0 9 9 9 9":      10,
		"7 (a (b) c) R 1 7 7 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 9 9 9 9": 300,
		"garbage":   0,
		"1 (x) S 1": 0,
	} {
		p, _ := procgroup.ParseStat([]byte(stat))
		if p.CPU != want {
			t.Errorf("the CPU of %q is %d, want %d", stat, p.CPU, want)
		}
	}
}
