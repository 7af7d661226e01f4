package helper

import (
	"os"
	"testing"
)

func threads(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err) // the helper runs on Linux only
	}
	return len(tasks)
}

// The reserve is real threads (20 at once, more than a Go program starts
// with), and they stay after the call.
func TestReserveThreads(t *testing.T) {
	reserveThreads(20)
	if n := threads(t); n < 20 {
		t.Fatalf("%d threads after reserving 20", n)
	}
}

// What an agent call pays for its reserve (each act reserves actThreads).
func BenchmarkReserveThreads(b *testing.B) {
	for b.Loop() {
		reserveThreads(actThreads)
	}
}
