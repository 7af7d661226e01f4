//go:build integration

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// The Go standard library's source ($(go env GOROOT)/src: 11,478 files,
// 157 MB here) in a fresh repository: a real tree rather than a generated
// one. It is made once per test process and removed by TestMain.
var goSrc struct {
	once sync.Once
	dir  string
	err  error
}

func goSrcRepo(b *testing.B) string {
	b.Helper()
	goSrc.once.Do(func() {
		ctx := context.Background()
		r := testenv.Exec()
		res, err := r.Run(ctx, runner.Cmd{Name: "go", Args: []string{"env", "GOROOT"}})
		if err != nil {
			goSrc.err = err
			return
		}
		tmp, err := os.MkdirTemp("", "lbbench-gosrc-")
		if err != nil {
			goSrc.err = err
			return
		}
		goSrc.dir = filepath.Join(tmp, testenv.UniqueName("lbbench"))
		src := filepath.Join(string(res.Stdout[:len(res.Stdout)-1]), "src")
		if _, err := r.Run(ctx, runner.Cmd{Name: "cp", Args: []string{"-a", src, goSrc.dir}}); err != nil {
			goSrc.err = err
			return
		}
	})
	if goSrc.err != nil {
		b.Fatal(goSrc.err)
	}
	if _, err := os.Stat(filepath.Join(goSrc.dir, ".git")); err != nil {
		testenv.Git(b, goSrc.dir, "init", "-q", "-b", "main")
		testenv.Git(b, goSrc.dir, "add", "-A")
		testenv.Git(b, goSrc.dir, "commit", "-q", "-m", "go/src")
	}
	return goSrc.dir
}

// removeGoSrc is TestMain's cleanup.
func removeGoSrc() {
	if goSrc.dir != "" {
		os.RemoveAll(filepath.Dir(goSrc.dir))
	}
}

// goSrcManager is a Manager of the Go source repository.
func goSrcManager(b *testing.B) *Manager {
	b.Helper()
	m, err := Open(context.Background(), testenv.Exec(), engine.Docker, goSrcRepo(b), config.Default())
	if err != nil {
		b.Fatal(err)
	}
	testenv.CleanupRepo(b, m.Repo.Root, m.Repo.RepoSlug)
	return m
}

// goSrcSandbox makes a sandbox of its own on the Go source repository.
func goSrcSandbox(b *testing.B) (*Manager, hostrepo.Names) { return sandboxOf(b, goSrcManager(b), "g") }

// sandboxOf is a sandbox of its own in m, named from prefix, deleted
// when the benchmark ends.
func sandboxOf(b *testing.B, m *Manager, prefix string) (*Manager, hostrepo.Names) {
	b.Helper()
	name := testenv.UniqueName(prefix)
	b.Cleanup(func() { _, _ = m.Delete(context.Background(), name, true) })
	if _, err := m.Create(context.Background(), create.CreateOptions{Name: name}); err != nil {
		b.Fatal(err)
	}
	return m, m.Repo.Names(name)
}

func BenchmarkBashNoopGoSrc(b *testing.B) {
	m, n := goSrcSandbox(b)
	benchBashNoopOn(b, m, n.Slug)
}

func BenchmarkRawBashNoopGoSrc(b *testing.B) {
	_, n := goSrcSandbox(b)
	for b.Loop() {
		docker(b, "exec", "--user", "1000:1000", n.Container, "sh", "-c", "true")
	}
}

func BenchmarkWriteGoSrc(b *testing.B) {
	m, n := goSrcSandbox(b)
	benchWriteOn(b, m, n.Slug)
}

func BenchmarkRawWriteGoSrc(b *testing.B) { benchRawWriteIn(b, goSrcSandbox) }

func BenchmarkEditGoSrc(b *testing.B) {
	m, n := goSrcSandbox(b)
	benchEditOn(b, m, n.Slug)
}

func BenchmarkRawEditGoSrc(b *testing.B) {
	_, n := goSrcSandbox(b)
	benchRawEditIn(b, n)
}

// change1000 appends a line to the first 1,000 Go files under net/ and os/
// and the like: one call that changes 1,000 tracked files.
const change1000 = `find ./[a-n]* -name '*.go' | head -n 1000 | while read -r f; do echo '// x' >> "$f"; done`

func BenchmarkChange1000GoSrc(b *testing.B) {
	m, n := goSrcSandbox(b)
	for b.Loop() {
		res, err := m.Agent.Bash(context.Background(), n.Slug, agent.BashOptions{Command: change1000})
		if err != nil || res.Snapshot == "" || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func BenchmarkRawChange1000GoSrc(b *testing.B) {
	_, n := goSrcSandbox(b)
	for b.Loop() {
		docker(b, "exec", "--user", "1000:1000", "--workdir", "/src", n.Container, "sh", "-c", change1000)
	}
}

// moveCmd renames the Go source's cmd (4,355 files in 710 directories
// here) to cmd2, or back: each run a directory rename of thousands of
// files, committed as that many deletes and adds. moveBack leaves cmd
// where the sandbox had it, for the benchmarks after.
const (
	moveCmd  = "if [ -d cmd ]; then mv cmd cmd2; else mv cmd2 cmd; fi"
	moveBack = "if [ -d cmd2 ]; then mv cmd2 cmd; fi"
)

func BenchmarkMoveDirGoSrc(b *testing.B) {
	m, n := goSrcSandbox(b)
	bash := func(cmd string) {
		if res, err := m.Agent.Bash(context.Background(), n.Slug, agent.BashOptions{Command: cmd}); err != nil || res.ExitCode != 0 {
			b.Fatalf("%+v %v", res, err)
		}
	}
	defer bash(moveBack)
	for b.Loop() {
		bash(moveCmd)
	}
}

func BenchmarkRawMoveDirGoSrc(b *testing.B) {
	_, n := goSrcSandbox(b)
	run := func(cmd string) {
		docker(b, "exec", "--user", "1000:1000", "--workdir", "/src", n.Container, "sh", "-c", cmd)
	}
	defer run(moveBack)
	for b.Loop() {
		run(moveCmd)
	}
}

// BenchmarkFirstCallAfterRestartGoSrc times the first bash no-op after a
// docker restart, when the container has lost its manifest and scans (and
// hashes) the whole tree. The restart itself is not timed.
func BenchmarkFirstCallAfterRestartGoSrc(b *testing.B) {
	m, n := goSrcSandbox(b)
	for b.Loop() {
		b.StopTimer()
		docker(b, "restart", "-t", "1", n.Container)
		b.StartTimer()
		res, err := m.Agent.Bash(context.Background(), n.Slug, agent.BashOptions{Command: "true"})
		if err != nil || res.Snapshot != "" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func BenchmarkRawFirstCallAfterRestartGoSrc(b *testing.B) {
	_, n := goSrcSandbox(b)
	for b.Loop() {
		b.StopTimer()
		docker(b, "restart", "-t", "1", n.Container)
		b.StartTimer()
		docker(b, "exec", "--user", "1000:1000", n.Container, "sh", "-c", "true")
	}
}
