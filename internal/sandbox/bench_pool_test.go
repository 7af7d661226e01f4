//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// A create that claims a warm pool entry, beside the floor of one: a
// started container renamed, the tree copied in, the setup run. The pool
// is filled (and the sandbox deleted) outside the timing, as the
// background refill does it.
func BenchmarkCreatePooled(b *testing.B)       { benchCreatePooled(b, testenv.SmallFiles) }
func BenchmarkRawCreatePooled(b *testing.B)    { benchRawCreatePooled(b, testenv.SmallFiles) }
func BenchmarkCreatePooled10k(b *testing.B)    { benchCreatePooled(b, bigFiles(10000)) }
func BenchmarkRawCreatePooled10k(b *testing.B) { benchRawCreatePooled(b, bigFiles(10000)) }

// BenchmarkCreatePooledBeside8 is CreatePooled while eight sandboxes of
// another repository run, as on a machine where agents work.
func BenchmarkCreatePooledBeside8(b *testing.B) {
	beside(b, 8)
	benchCreatePooled(b, testenv.SmallFiles)
}

func BenchmarkRawCreatePooledBeside8(b *testing.B) {
	beside(b, 8)
	benchRawCreatePooled(b, testenv.SmallFiles)
}

// beside starts n sandboxes of a repository of their own, running for
// the rest of the benchmark.
func beside(b *testing.B, n int) {
	b.Helper()
	m := benchManager(b)
	for i := range n {
		if _, err := m.Create(context.Background(), create.CreateOptions{Name: fmt.Sprintf("busy%d", i), OverLimit: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchCreatePooled(b *testing.B, files testenv.Files) {
	m := benchManagerOf(b, files)
	benchPooledCreates(b, m, func(*create.Created) error { return nil })
}

// benchPooledCreates times creates with m from a pool of one, filled
// before each outside the timing; check says what else each must have
// done. Each sandbox is deleted untimed (benchMakes).
func benchPooledCreates(b *testing.B, m *Manager, check func(*create.Created) error) {
	m.Repo.Config.PoolSize = 1
	benchMakes(b, m, func(ctx context.Context, name string) (*create.Created, error) {
		b.StopTimer()
		if st, err := m.Creator.FillPool(ctx); err != nil || len(st.Ready) != 1 {
			b.Fatalf("fill: %+v %v", st, err)
		}
		settle()
		b.StartTimer()
		c, err := m.Create(ctx, create.CreateOptions{Name: name})
		if err == nil && c.Pool == "" {
			err = fmt.Errorf("the create did not claim the entry")
		}
		if err == nil {
			err = check(c)
		}
		return c, err
	})
}

func benchRawCreatePooled(b *testing.B, files testenv.Files) {
	m := benchManagerOf(b, files)
	ctx := context.Background()
	base := testenv.Git(b, m.Repo.Root, "rev-parse", "HEAD")
	cli := dockercli.New("docker", testenv.Exec())
	i := 0
	for b.Loop() {
		b.StopTimer()
		n := m.Repo.Names(fmt.Sprintf("raw%d", i))
		i++
		ahead := n
		ahead.Container, ahead.Volume = n.Container+".ahead", n.Container+".ahead-src"
		spec := m.Creator.ContainerSpec(ahead, base, m.Repo.Config, nil, helperbin.Pinned("", "raw"))
		spec.Entrypoint, spec.Cmd, spec.AnonVolumes = "/bin/sh", []string{"-c", "sleep 1000000"}, nil
		if _, err := cli.Run(ctx, spec); err != nil {
			b.Fatal(err)
		}
		if _, err := cli.Exec(ctx, ahead.Container, box.ExecSpec{User: "0:0", Cmd: []string{"chmod", "0777", "/src"}}, box.Streams{}); err != nil {
			b.Fatal(err)
		}
		settle()
		b.StartTimer()
		docker(b, "rename", ahead.Container, n.Container)
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(m.Repo.Git.Archive(ctx, base, pw)) }()
		if err := cli.CopyIn(ctx, n.Container, "/src", pr); err != nil {
			b.Fatal(err)
		}
		if _, err := cli.Exec(ctx, n.Container, box.ExecSpec{User: "1000:1000", Cmd: []string{"sh", "-c", "echo hello world"}}, box.Streams{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		docker(b, "rm", "-f", "-v", n.Container)
		docker(b, "volume", "rm", "-f", ahead.Volume, ahead.Container+"-home")
		settle()
		b.StartTimer()
	}
}

// BenchmarkSetupCachedPooled is BenchmarkSetupCached with a warm pool: the
// cache's entry is copied into a claimed box instead of a new one.
func BenchmarkSetupCachedPooled(b *testing.B) {
	m := benchSetupManager(b, 0)
	ctx := context.Background()
	if c, err := m.Create(ctx, create.CreateOptions{Name: "warm"}); err != nil || c.SetupCache == nil || !c.SetupCache.Saved {
		b.Fatalf("%+v %v", c, err)
	}
	benchPooledCreates(b, m, func(c *create.Created) error {
		if c.SetupCache == nil || !c.SetupCache.Hit {
			return fmt.Errorf("not from the cache: %+v", c.SetupCache)
		}
		return nil
	})
}
