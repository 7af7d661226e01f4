//go:build integration

package sandbox

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// A `litterbox run` session of a command that prints a line and exits,
// and (Raw) the same command by docker exec -i: what run adds (the
// helper's sized, the settle beside it, the kill and the final commit).
// first-output-ms is the time to the command's first byte: what a person
// waits for before the agent answers.
func BenchmarkRunEcho(b *testing.B) {
	m, _ := benchSandbox(b)
	ctx := context.Background()
	var first firstByte
	for b.Loop() {
		first.start()
		res, err := m.Agent.Run(ctx, "bench", agent.RunOptions{ExecOptions: agent.ExecOptions{
			Cmd: []string{"echo", "ready"}, Interactive: true, Streams: box.Streams{Stdout: &first, Stderr: io.Discard},
		}})
		if err != nil || res.ExitCode != 0 || len(res.Commits) != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
	first.report(b)
}

func BenchmarkRawRunEcho(b *testing.B) {
	_, n := benchSandbox(b)
	var first firstByte
	for b.Loop() {
		first.start()
		cmd := runner.Cmd{Name: "docker", Args: []string{"exec", "-i", "--user", "1000:1000", "-w", "/src", n.Container, "echo", "ready"}, Stdout: &first}
		if _, err := testenv.Exec().Run(context.Background(), cmd); err != nil {
			b.Fatal(err)
		}
	}
	first.report(b)
}

// firstByte times, per iteration, the first write it receives.
type firstByte struct {
	mu    sync.Mutex
	t0    time.Time
	seen  bool
	total time.Duration
	n     int
}

func (f *firstByte) start() {
	f.mu.Lock()
	f.t0, f.seen = time.Now(), false
	f.mu.Unlock()
}

func (f *firstByte) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.seen && len(p) > 0 {
		f.seen, f.total, f.n = true, f.total+time.Since(f.t0), f.n+1
	}
	return len(p), nil
}

func (f *firstByte) report(b *testing.B) {
	if f.n > 0 {
		b.ReportMetric(float64(f.total.Milliseconds())/float64(f.n), "first-output-ms")
	}
}
