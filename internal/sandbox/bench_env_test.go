//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// A project whose setup takes sleepSeconds and leaves a 5,000-file ignored
// directory, as `npm ci` leaves node_modules.
func benchSetupCommand(sleepSeconds int) string { return ignoredFilesCommand(sleepSeconds, 50) }

// ignoredFilesCommand sleeps, then leaves dirs directories of 100 ignored
// files each.
func ignoredFilesCommand(sleepSeconds, dirs int) string {
	return fmt.Sprintf(`sleep %d && i=0 && while [ $i -lt %d ]; do mkdir -p node_modules/p$i && j=0 && `+
		`while [ $j -lt 100 ]; do echo $i.$j > node_modules/p$i/f$j; j=$((j+1)); done; i=$((i+1)); done && touch node_modules/.ok`, sleepSeconds, dirs)
}

// setupSleep is the setup's duration in the first-create benchmark, the one
// whose figure the cache is measured against.
const setupSleep = 20

func benchSetupManager(b *testing.B, sleepSeconds int) *Manager {
	b.Helper()
	m := benchManagerOf(b, testenv.Files{"README.md": "bench\n", ".gitignore": "node_modules/\n", "package.json": "{}\n"})
	cfg := config.Default()
	cfg.SetupCommand = benchSetupCommand(sleepSeconds)
	cfg.SetupInputs = []string{"package.json"}
	m.Repo.Config = cfg
	return m
}

// BenchmarkSetupFirst is a create that runs the 20 s setup and keeps its
// result in the cache; each iteration has a key of its own.
func BenchmarkSetupFirst(b *testing.B) {
	m := benchSetupManager(b, setupSleep)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("first%d", i)
		m.Repo.Config.Env = map[string]string{"BENCH_RUN": name}
		i++
		c, err := m.Create(ctx, create.CreateOptions{Name: name})
		if err != nil || c.SetupCache == nil || !c.SetupCache.Saved {
			b.Fatalf("%+v %v", c, err)
		}
		b.StopTimer()
		if _, err := m.Delete(ctx, name, true); err != nil {
			b.Fatal(err)
		}
		if _, _, err := m.Creator.SetupCache().Prune(ctx); err != nil {
			b.Fatal(err)
		}
		settle()
		b.StartTimer()
	}
}

// BenchmarkRawSetupFirst is its floor: the raw create and the setup
// command run by docker exec.
func BenchmarkRawSetupFirst(b *testing.B) {
	m := benchSetupManager(b, setupSleep)
	benchRaw(b, m, func(ctx context.Context, cli *dockercli.Client, n hostrepo.Names) {
		if _, err := cli.Exec(ctx, n.Container, box.ExecSpec{User: "1000:1000", Workdir: "/src", Cmd: []string{"sh", "-c", m.Repo.Config.SetupCommand}}, box.Streams{}); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkSetupCached is a create whose setup result (5,000 ignored
// files) comes from the cache; SetupCached50k one of 50,000.
func BenchmarkSetupCached(b *testing.B)    { benchSetupCached(b, 50) }
func BenchmarkSetupCached50k(b *testing.B) { benchSetupCached(b, 500) }

func benchSetupCached(b *testing.B, dirs int) {
	m := benchSetupManager(b, 0)
	m.Repo.Config.SetupCommand = ignoredFilesCommand(0, dirs)
	ctx := context.Background()
	if c, err := m.Create(ctx, create.CreateOptions{Name: "warm"}); err != nil || c.SetupCache == nil || !c.SetupCache.Saved {
		b.Fatalf("%+v %v", c, err)
	}
	benchMakes(b, m, func(ctx context.Context, name string) (*create.Created, error) {
		c, err := m.Create(ctx, create.CreateOptions{Name: name})
		if err == nil && (c.SetupCache == nil || !c.SetupCache.Hit) {
			err = fmt.Errorf("not from the cache: %+v", c.SetupCache)
		}
		return c, err
	})
}

// BenchmarkRawSetupCached is its floor: the raw create and a copy of a
// 5,000-file volume (RawSetupCached50k: 50,000) with cp -a in a throwaway
// container.
func BenchmarkRawSetupCached(b *testing.B)    { benchRawSetupCached(b, 50) }
func BenchmarkRawSetupCached50k(b *testing.B) { benchRawSetupCached(b, 500) }

func benchRawSetupCached(b *testing.B, dirs int) {
	m := benchSetupManager(b, 0)
	cache := m.Repo.Names("rawcache").Volume
	fillVolume(b, cache, ignoredFilesCommand(0, dirs))
	benchRaw(b, m, func(ctx context.Context, cli *dockercli.Client, n hostrepo.Names) {
		copyVolumeRaw(b, cache, n.Volume)
	})
}

// BenchmarkFork forks a sandbox holding the 5,000-file ignored directory;
// Fork500 and Fork50k one holding 500 and 50,000 ignored files.
func BenchmarkFork(b *testing.B)    { benchFork(b, 50) }
func BenchmarkFork500(b *testing.B) { benchFork(b, 5) }
func BenchmarkFork50k(b *testing.B) { benchFork(b, 500) }

func benchFork(b *testing.B, dirs int) {
	m := benchSetupManager(b, 0)
	m.Repo.Config.SetupCommand = ignoredFilesCommand(0, dirs)
	m.Repo.Config.SetupCache = false
	ctx := context.Background()
	if _, err := m.Create(ctx, create.CreateOptions{Name: "src"}); err != nil {
		b.Fatal(err)
	}
	benchMakes(b, m, func(ctx context.Context, name string) (*create.Created, error) {
		return m.Creator.Fork(ctx, create.ForkOptions{Source: "src", Name: name})
	})
}

// BenchmarkRawFork is its floor: a new container on a new volume, and the
// source's volume copied into it with cp -a.
func BenchmarkRawFork(b *testing.B)    { benchRawFork(b, 50) }
func BenchmarkRawFork500(b *testing.B) { benchRawFork(b, 5) }
func BenchmarkRawFork50k(b *testing.B) { benchRawFork(b, 500) }

func benchRawFork(b *testing.B, dirs int) {
	m := benchSetupManager(b, 0)
	src := m.Repo.Names("rawsrc").Volume
	fillVolume(b, src, ignoredFilesCommand(0, dirs))
	ctx := context.Background()
	cli := dockercli.New("docker", testenv.Exec())
	i := 0
	for b.Loop() {
		n := m.Repo.Names(fmt.Sprintf("rawfork%d", i))
		i++
		spec := m.Creator.ContainerSpec(n, "", m.Repo.Config, nil, helperbin.Pinned("", "raw"))
		spec.Entrypoint, spec.Cmd, spec.AnonVolumes = "/bin/sh", []string{"-c", "sleep 1000000"}, nil
		if _, err := cli.Run(ctx, spec); err != nil {
			b.Fatal(err)
		}
		copyVolumeRaw(b, src, n.Volume)
		b.StopTimer()
		docker(b, "rm", "-f", "-v", n.Container)
		docker(b, "volume", "rm", "-f", n.Volume, n.Container+"-home") // the home too
		settle()
		b.StartTimer()
	}
}

// benchRaw times a raw create (docker run, the tree by git archive into
// docker cp) followed by more, removing what it made untimed.
func benchRaw(b *testing.B, m *Manager, more func(context.Context, *dockercli.Client, hostrepo.Names)) {
	ctx := context.Background()
	base := testenv.Git(b, m.Repo.Root, "rev-parse", "HEAD")
	cli := dockercli.New("docker", testenv.Exec())
	i := 0
	for b.Loop() {
		n := m.Repo.Names(fmt.Sprintf("raw%d", i))
		i++
		rawCreate(b, m, cli, n, base)
		more(ctx, cli, n)
		b.StopTimer()
		docker(b, "rm", "-f", "-v", n.Container)
		docker(b, "volume", "rm", "-f", n.Volume, n.Container+"-home") // the home too
		settle()
		b.StartTimer()
	}
}

// fillVolume makes volume hold what setup makes, owned by the sandbox
// user, and removes it when the benchmark ends.
func fillVolume(b *testing.B, volume, setup string) {
	b.Helper()
	b.Cleanup(func() { _, _ = testenv.Docker("volume", "rm", "-f", volume) })
	docker(b, "run", "--rm", "--user", "0:0", "--workdir", "/v", "--mount", "type=volume,source="+volume+",target=/v", "busybox:latest",
		"sh", "-c", strings.Replace(setup, "sleep 0 && ", "", 1)+" && chown -R 1000:1000 /v")
}

// copyVolumeRaw is how a person copies one volume into another with docker.
func copyVolumeRaw(b *testing.B, from, to string) {
	b.Helper()
	docker(b, "run", "--rm", "--network", "none", "--mount", "type=volume,source="+from+",target=/from,readonly",
		"--mount", "type=volume,source="+to+",target=/to", "busybox:latest", "cp", "-a", "/from/.", "/to/")
}
