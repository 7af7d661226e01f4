package helper

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

func TestParseMemoryLimit(t *testing.T) {
	for in, want := range map[string]int64{"1073741824\n": 1 << 30, "max\n": 0, "9223372036854771712\n": 0, "0\n": 0, "": 0, "-1": 0} {
		if got, ok := parseMemoryLimit(in); got != want || ok != (want != 0) {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
}

// The heap's soft limit is a quarter of the cgroup's limit, and the
// collector's pace the default, whatever the environment said.
func TestLimitHeapFollowsTheCgroup(t *testing.T) {
	dir := t.TempDir()
	v1 := filepath.Join(dir, "memory.limit_in_bytes")
	if err := os.WriteFile(v1, []byte("1073741824\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oldFiles, oldPct, oldLimit := cgroupFiles, debug.SetGCPercent(-1), debug.SetMemoryLimit(-1)
	t.Cleanup(func() { cgroupFiles = oldFiles; debug.SetGCPercent(oldPct); debug.SetMemoryLimit(oldLimit) })

	cgroupFiles = []string{filepath.Join(dir, "memory.max"), v1}
	limitHeap()
	if got := debug.SetMemoryLimit(-1); got != 1<<28 {
		t.Errorf("soft limit %d, want a quarter of 1 GiB", got)
	}
	if got := debug.SetGCPercent(-1); got != 100 {
		t.Errorf("GC percent %d after GOGC=off, want 100", got)
	}
	cgroupFiles = []string{filepath.Join(dir, "memory.max")}
	debug.SetMemoryLimit(1 << 20)
	limitHeap()
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("soft limit %d with no cgroup limit, want none", got)
	}
}
