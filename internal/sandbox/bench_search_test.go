//go:build integration

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// The search benchmarks' tree: the Go source three times over and its
// tests (37,888 files, 490 MB) in an ignored directory of a Debian
// sandbox, whose GNU grep and find are the floor. Made once per test
// process, shared by the search benchmarks, and removed by TestMain.
var searchBox struct {
	once sync.Once
	dir  string
	m    *Manager
	n    hostrepo.Names
	err  error
}

// searchTree is where the tree is in the sandbox.
const searchTree = "/src/big"

func searchSandbox(b *testing.B) (*Manager, hostrepo.Names) {
	b.Helper()
	searchBox.once.Do(func() { searchBox.err = makeSearchSandbox() })
	if searchBox.err != nil {
		b.Fatal(searchBox.err)
	}
	return searchBox.m, searchBox.n
}

func makeSearchSandbox() error {
	ctx := context.Background()
	r := testenv.Exec()
	goroot, err := goRoot()
	if err != nil {
		return err
	}
	if searchBox.dir, err = benchRepoDir("lbbench-search-"); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(searchBox.dir, ".gitignore"), []byte("big/\n"), 0o644); err != nil {
		return err
	}
	if err := commitAll(searchBox.dir, "search"); err != nil {
		return err
	}
	cfg := config.Default()
	cfg.Image = "litterbox-test/debian:bookworm"
	m, err := Open(ctx, r, engine.Docker, searchBox.dir, cfg)
	if err != nil {
		return err
	}
	searchBox.m, searchBox.n = m, m.Repo.Names("search")
	if _, err := m.Create(ctx, create.CreateOptions{Name: "search"}); err != nil {
		return err
	}
	for i, src := range []string{"src", "src", "src", "test"} {
		if _, err := m.Agent.Upload(ctx, "search", filepath.Join(goroot, src), searchTree+"/"+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	return nil
}

// goRoot is the Go installation whose source the large benchmarks use.
func goRoot() (string, error) {
	res, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "go", Args: []string{"env", "GOROOT"}})
	return strings.TrimSpace(string(res.Stdout)), err
}

// benchRepoDir makes an empty directory for a benchmark's repository, in a
// temporary directory of its own (removed whole by TestMain's cleanup).
func benchRepoDir(prefix string) (string, error) {
	tmp, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(tmp, testenv.UniqueName("lbbench"))
	return dir, os.MkdirAll(dir, 0o755)
}

// commitAll makes dir a repository whose one commit holds every file in
// it, ignored ones too.
func commitAll(dir, msg string) error {
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A", "-f"}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", msg}} {
		if _, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "git", Args: args, Dir: dir}); err != nil {
			return err
		}
	}
	return nil
}

// removeSearch is TestMain's cleanup.
func removeSearch() { removeSharedBox(searchBox.m, "search", searchBox.dir) }

// removeSharedBox removes a sandbox the benchmarks share, made by m (nil
// when none was), its repository's leftovers, and the repository at dir
// with the temporary directory around it.
func removeSharedBox(m *Manager, name, dir string) {
	if m != nil {
		_, _ = m.Delete(context.Background(), name, true)
		testenv.RemoveAll(m.Repo.Root, m.Repo.RepoSlug)
	}
	if dir != "" {
		os.RemoveAll(filepath.Dir(dir))
	}
}

// The patterns: a literal, a regular expression both RE2 and GNU grep -E
// read alike, and a glob; each matches fewer than the 5,000 results a call
// returns, so both sides read the whole tree.
const (
	grepLiteral = "ErrDeadlineExceeded"
	grepRegex   = `func \([a-z]+ \*[A-Z][a-z]+\) Close\(`
	globPattern = "**/*.s"
	findName    = "*.s"
)

func BenchmarkGrep38k(b *testing.B)         { benchGrep(b, grepLiteral) }
func BenchmarkRawGrep38k(b *testing.B)      { benchRawGrep(b, "-rnF", grepLiteral) }
func BenchmarkGrepRegex38k(b *testing.B)    { benchGrep(b, grepRegex) }
func BenchmarkRawGrepRegex38k(b *testing.B) { benchRawGrep(b, "-rnE", grepRegex) }

func benchGrep(b *testing.B, pattern string) {
	m, n := searchSandbox(b)
	var got int
	for b.Loop() {
		matches, truncated, err := m.Agent.Grep(context.Background(), n.Slug, pattern, searchTree, "")
		if err != nil || truncated || len(matches) == 0 {
			b.Fatalf("%d matches, truncated %v: %v", len(matches), truncated, err)
		}
		got = len(matches)
	}
	if want := rawCount(b, n, "grep", "-rn", "-E", pattern, searchTree); got != want {
		b.Fatalf("grep found %d matches, grep -rn %d", got, want)
	}
}

func benchRawGrep(b *testing.B, flags, pattern string) {
	_, n := searchSandbox(b)
	for b.Loop() {
		docker(b, "exec", "--user", "1000:1000", n.Container, "grep", flags, pattern, searchTree)
	}
}

func BenchmarkGlob38k(b *testing.B) {
	m, n := searchSandbox(b)
	var got int
	for b.Loop() {
		paths, truncated, err := m.Agent.Glob(context.Background(), n.Slug, globPattern, searchTree)
		if err != nil || truncated || len(paths) == 0 {
			b.Fatalf("%d paths, truncated %v: %v", len(paths), truncated, err)
		}
		got = len(paths)
	}
	if want := rawCount(b, n, "find", searchTree, "-name", findName, "-type", "f"); got != want {
		b.Fatalf("glob found %d paths, find %d", got, want)
	}
}

func BenchmarkRawGlob38k(b *testing.B) {
	_, n := searchSandbox(b)
	for b.Loop() {
		docker(b, "exec", "--user", "1000:1000", n.Container, "find", searchTree, "-name", findName)
	}
}

// rawCount is how many lines argv prints in the sandbox.
func rawCount(b *testing.B, n hostrepo.Names, argv ...string) int {
	b.Helper()
	out, err := testenv.Docker(append([]string{"exec", "--user", "1000:1000", n.Container}, argv...)...)
	if err != nil {
		b.Fatalf("%v: %v", argv, err)
	}
	if out == "" {
		return 0
	}
	return strings.Count(out, "\n") + 1 // Docker trims the last newline
}

// BenchmarkBashLongTestRun is a test runner's long output (80,001 lines,
// 2.2 MB, the summary last) through bash: what the result keeps of it
// (kept-bytes), and that the summary is among it.
func BenchmarkBashLongTestRun(b *testing.B) {
	m, n := benchToolSandbox(b, testenv.SmallFiles)
	const run = `awk 'BEGIN { for (i = 0; i < 40000; i++) { print "=== RUN   TestCase" i; print "--- PASS: TestCase" i " (0.00s)" }; print "ok  \texample.com/pkg\t12.345s" }'`
	var kept int
	for b.Loop() {
		res, err := m.Agent.Bash(context.Background(), n.Slug, agent.BashOptions{Command: run})
		if err != nil || !strings.HasSuffix(res.Stdout, "ok  \texample.com/pkg\t12.345s\n") || res.StdoutCut == 0 {
			b.Fatalf("the summary is not kept: %v", err)
		}
		kept = len(res.Stdout)
	}
	b.ReportMetric(float64(kept), "kept-bytes")
}
