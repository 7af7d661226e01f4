package procgroup

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// startSleep starts a sleep with marker in its environment, killed at the
// test's end whatever happens.
func startSleep(t *testing.T, marker string) *Cmd {
	t.Helper()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	c, err := Start([]string{"sleep", "30"}, "", os.Environ(), marker, devnull, devnull)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); c.Wait() })
	return c
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	_, ok := startOf(pid)
	return ok
}

// A marked process is killed, an unmarked one is left alone.
func TestKillMarked(t *testing.T) {
	marked, other := startSleep(t, "LB_TEST_MARK=a"), startSleep(t, "LB_TEST_MARK=b")
	KillMarked("LB_TEST_MARK=a")
	if code := marked.Wait(); code != 128+9 {
		t.Errorf("the marked process ended with %d, want 137", code)
	}
	if !alive(other.cmd.Process.Pid) {
		t.Error("the unmarked process was killed")
	}
}

// killProc never kills a process whose start time differs from the one
// read (a recycled pid), nor, by a pid that names a thread of this very
// process (as a wrapped pid may, after a fork bomb), this process.
func TestKillProcPinned(t *testing.T) {
	c := startSleep(t, "LB_TEST_MARK=c")
	pid := c.cmd.Process.Pid
	start, ok := startOf(pid)
	if !ok {
		t.Fatal("no start time for the sleep")
	}
	killProc(Proc{PID: pid, Start: start + 1})
	time.Sleep(50 * time.Millisecond)
	if !alive(pid) {
		t.Fatal("a process with another start time was killed")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if tid, _ := strconv.Atoi(task.Name()); tid != os.Getpid() {
			if s, ok := startOf(tid); ok {
				killProc(Proc{PID: tid, Start: s})
			}
		}
	}
	time.Sleep(50 * time.Millisecond) // still here
	killProc(Proc{PID: pid, Start: start})
	if code := c.Wait(); code != 128+9 {
		t.Errorf("the sleep ended with %d, want 137", code)
	}
}
