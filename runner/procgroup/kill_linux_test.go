package procgroup

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A marked process is killed, an unmarked one is left alone, and a pid
// that names a thread of this very process (as a wrapped pid may, after a
// fork bomb) never ends it.
func TestKillMarked(t *testing.T) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	start := func(marker string) *Cmd {
		c, err := Start([]string{"sleep", "30"}, "", os.Environ(), marker, devnull, devnull)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Kill(); c.Wait() })
		return c
	}
	marked, other := start("LB_TEST_MARK=a"), start("LB_TEST_MARK=b")
	killMarked(marked.cmd.Process.Pid, "LB_TEST_MARK=a")
	killMarked(other.cmd.Process.Pid, "LB_TEST_MARK=a")
	if code := marked.Wait(); code != 128+9 {
		t.Errorf("the marked process ended with %d, want 137", code)
	}
	time.Sleep(50 * time.Millisecond)
	if !hasMarker(other.cmd.Process.Pid, "LB_TEST_MARK=b") {
		t.Error("the unmarked process was killed")
	}

	// Every thread of this process, by a marker its environment holds.
	environ, err := os.ReadFile("/proc/self/environ")
	if err != nil || len(environ) == 0 {
		t.Fatalf("environ: %v", err)
	}
	own := strings.SplitN(string(environ), "\x00", 2)[0]
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if tid, _ := strconv.Atoi(task.Name()); tid != os.Getpid() {
			if !hasMarker(tid, own) {
				t.Fatalf("thread %d does not show the process's environment", tid)
			}
			killMarked(tid, own)
		}
	}
	time.Sleep(50 * time.Millisecond) // still here
}
