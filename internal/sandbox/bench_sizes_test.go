//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// The everyday calls on the largest tree: the Go source three times over
// and its tests (37,888 files, 490 MB), every file tracked, in one busybox
// sandbox shared by these benchmarks (its making is not timed) and removed
// by TestMain. Beside the small repository, 10k and the Go source, it
// shows what a call costs as a repository grows.
var tracked38k struct {
	once sync.Once
	dir  string
	m    *Manager
	err  error
}

func tracked38kSandbox(b *testing.B) (*Manager, hostrepo.Names) {
	b.Helper()
	tracked38k.once.Do(func() { tracked38k.err = makeTracked38k() })
	if tracked38k.err != nil {
		b.Fatal(tracked38k.err)
	}
	return tracked38k.m, tracked38k.m.Repo.Names("t38k")
}

func makeTracked38k() error {
	ctx := context.Background()
	r := testenv.Exec()
	goroot, err := goRoot()
	if err != nil {
		return err
	}
	if tracked38k.dir, err = benchRepoDir("lbbench-38k-"); err != nil {
		return err
	}
	for i, src := range []string{"src", "src", "src", "test"} {
		if _, err := r.Run(ctx, runner.Cmd{Name: "cp", Args: []string{"-a", filepath.Join(goroot, src), filepath.Join(tracked38k.dir, fmt.Sprint(i))}}); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(tracked38k.dir, "README.md"), []byte("38k\n"), 0o644); err != nil {
		return err
	}
	// The Go tree's own .gitignore files would leave some out: every
	// file is tracked, as in a repository of that size.
	if err := commitAll(tracked38k.dir, "38k"); err != nil {
		return err
	}
	m, err := Open(ctx, r, engine.Docker, tracked38k.dir, config.Default())
	if err != nil {
		return err
	}
	tracked38k.m = m
	_, err = m.Create(ctx, create.CreateOptions{Name: "t38k"})
	return err
}

// removeTracked38k is TestMain's cleanup.
func removeTracked38k() { removeSharedBox(tracked38k.m, "t38k", tracked38k.dir) }

func BenchmarkBashNoop38k(b *testing.B) {
	m, n := tracked38kSandbox(b)
	benchBashNoopOn(b, m, n.Slug)
}

func BenchmarkRawBashNoop38k(b *testing.B) {
	_, n := tracked38kSandbox(b)
	benchRawExecIn(b, n)
}

func BenchmarkWrite38k(b *testing.B) {
	m, n := tracked38kSandbox(b)
	benchWriteOn(b, m, n.Slug)
}

func BenchmarkRawWrite38k(b *testing.B) {
	benchRawWriteIn(b, func(b *testing.B) (*Manager, hostrepo.Names) { return tracked38kSandbox(b) })
}

func BenchmarkEdit38k(b *testing.B) {
	m, n := tracked38kSandbox(b)
	benchEditOn(b, m, n.Slug)
}

func BenchmarkRawEdit38k(b *testing.B) {
	_, n := tracked38kSandbox(b)
	benchRawEditIn(b, n)
}

func BenchmarkRead38k(b *testing.B) {
	m, n := tracked38kSandbox(b)
	benchReadIn(b, m, n, "README.md")
}

func BenchmarkRawRead38k(b *testing.B) {
	_, n := tracked38kSandbox(b)
	benchRawReadIn(b, n, "README.md")
}

func BenchmarkReadGoSrc(b *testing.B) {
	m, n := goSrcSandbox(b)
	benchReadIn(b, m, n, "README.vendor")
}

func BenchmarkRawReadGoSrc(b *testing.B) {
	_, n := goSrcSandbox(b)
	benchRawReadIn(b, n, "README.vendor")
}
