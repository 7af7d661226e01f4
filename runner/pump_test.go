package runner

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// slowWriter takes data as a busy consumer does: a pause per write.
type slowWriter struct {
	buf   bytes.Buffer
	pause time.Duration
}

func (w *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(w.pause)
	return w.buf.Write(p)
}

// A caller that takes its stream slower than the process writes it gets
// all of it, however long after the exit that takes: os/exec's copier
// gave up WaitDelay after the exit ("WaitDelay expired before I/O
// complete"), which failed snapshots on a loaded machine.
func TestExecWaitsForASlowReader(t *testing.T) {
	r := NewExec(quiet())
	r.KillGrace = 100 * time.Millisecond
	w := &slowWriter{pause: 300 * time.Millisecond}
	// The pipe holds the 96 KiB at once, so head exits at the start, and
	// the writes of 32 KiB at 300 ms each go on for a second after that.
	_, err := r.Run(context.Background(), Cmd{Name: "head", Args: []string{"-c", "98304", "/dev/zero"}, Stdout: w, Stderr: &slowWriter{}})
	if err != nil {
		t.Fatal(err)
	}
	if w.buf.Len() != 98304 {
		t.Fatalf("got %d bytes, want %d", w.buf.Len(), 98304)
	}
}

// A process the command leaves behind holding its stdout does not hold
// Run past the grace: the stream is cut off once nothing arrives.
func TestExecCutsOffAPipeHeldByAnOrphan(t *testing.T) {
	r := NewExec(quiet())
	r.KillGrace = 200 * time.Millisecond
	var out bytes.Buffer
	start := time.Now()
	_, err := r.Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", "sleep 5 & echo hi"}, Stdout: &out})
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Run took %v with an orphan holding stdout", took)
	}
	if err != nil || strings.TrimSpace(out.String()) != "hi" {
		t.Fatalf("%q %v", out.String(), err)
	}
}
