//go:build integration

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// BenchmarkWatchRefresh20 is one refresh of litterbox watch over 20
// sandboxes, the engine's stats read with it (the view reads them apart,
// so its rows do not wait for them): the engine and git calls it makes
// and the CPU it and its children take, per refresh.
func BenchmarkWatchRefresh20(b *testing.B) {
	ctx := context.Background()
	count := &runner.Counter{Inner: testenv.Exec()}
	m := watchRepo(b, count, 20)
	src := &watchSource{m: m, wait: true}
	// The first refresh counts each branch's commits; later ones find
	// them cached, as every refresh of a running view does.
	if _, err := src.Rows(ctx); err != nil {
		b.Fatal(err)
	}
	count.Reset()
	n, cpu := 0, cpuTime()
	for b.Loop() {
		rows, err := src.Rows(ctx)
		if err != nil || len(rows) != 20 || rows[0].CPU == "" {
			b.Fatalf("%d rows (%+v), %v", len(rows), rows, err)
		}
		n++
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
	b.ReportMetric(float64(count.Count("docker"))/float64(n), "docker/op")
	b.ReportMetric(float64(count.Count("git"))/float64(n), "git/op")
}

// BenchmarkRawWatchRefresh20 is the floor: the engine calls no view of
// these sandboxes can do without, their list and their stats.
func BenchmarkRawWatchRefresh20(b *testing.B) {
	ctx := context.Background()
	r := testenv.Exec()
	m := watchRepo(b, r, 20)
	n, cpu := 0, cpuTime()
	for b.Loop() {
		for _, args := range [][]string{
			{"ps", "-a", "--filter", "label=dev.litterbox.repo=" + m.Repo.RepoPath},
			{"stats", "--no-stream", "--format", "{{.Name}}\t{{.CPUPerc}}\t{{.MemUsage}}"},
		} {
			if _, err := r.Run(ctx, runner.Cmd{Name: "docker", Args: args}); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(time.Millisecond)/float64(n), "cpu-ms/op")
	b.ReportMetric(2, "docker/op")
}

// watchRepo is a new repository with count sandboxes, made through r.
func watchRepo(b *testing.B, r runner.Runner, count int) *sandbox.Manager {
	b.Helper()
	dir := filepath.Join(b.TempDir(), testenv.UniqueName("lbbench"))
	testenv.NewRepo(b, dir, testenv.SmallFiles)
	m, err := sandbox.Open(context.Background(), r, engine.Docker, dir, config.Default())
	if err != nil {
		b.Fatal(err)
	}
	testenv.CleanupRepo(b, m.Repo.Root, m.Repo.RepoSlug)
	for i := range count {
		if _, err := m.Create(context.Background(), create.CreateOptions{Name: fmt.Sprintf("w%02d", i), OverLimit: true}); err != nil {
			b.Fatal(err)
		}
	}
	return m
}

// cpuTime is the user and system time of this process and of its
// children that have ended (the docker and git commands it ran).
func cpuTime() time.Duration {
	var t time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var u syscall.Rusage
		if syscall.Getrusage(who, &u) == nil {
			t += time.Duration(u.Utime.Nano() + u.Stime.Nano())
		}
	}
	return t
}
