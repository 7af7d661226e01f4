// Package testenv is shared by Litterbox's tests: deterministic temp git
// repositories, record/replay runners, and cleanup of what a test created on
// the engine. It runs programs only through runner.
package testenv

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/runner"
)

// Record re-records transcripts against the real engine:
// go test ./internal/sandbox ./mcp -run Replay -record
var Record = flag.Bool("record", false, "re-record testdata transcripts against the real docker engine")

// Quiet is a logger that discards everything, or logs at debug level to
// stderr when LITTERBOX_TEST_DEBUG is set.
func Quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	if os.Getenv("LITTERBOX_TEST_DEBUG") != "" {
		l.SetOutput(os.Stderr)
		l.SetLevel(logrus.DebugLevel)
	}
	return l
}

// Exec is the real runner with Quiet logging.
func Exec() runner.Runner { return runner.NewExec(Quiet()) }

// fixedEnv makes commits reproducible: same content, same ids, on any machine,
// with no git identity configured.
var fixedEnv = []string{
	"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com", "GIT_AUTHOR_DATE=2026-01-01T00:00:00Z",
	"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
	"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
}

// Git runs git in dir and returns its trimmed stdout, failing the test on error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	res, err := Exec().Run(context.Background(), runner.Cmd{Name: "git", Args: append([]string{"-C", dir}, args...), Env: fixedEnv})
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(res.Stdout))
}

// Docker runs docker and returns its trimmed stdout and error.
func Docker(args ...string) (string, error) {
	res, err := Exec().Run(context.Background(), runner.Cmd{Name: "docker", Args: args})
	return strings.TrimSpace(string(res.Stdout)), err
}

// Files is a repository's content: path -> body. A path ending in "*" is
// made executable (the "*" is dropped).
type Files map[string]string

// SmallFiles is the default content of a test repository.
var SmallFiles = Files{
	"README.md":       "# test repo\n",
	"src/main.go":     "package main\n\nfunc main() {}\n",
	"scripts/run.sh*": "#!/bin/sh\necho run\n",
	"docs/a b/c.txt":  "spaces in paths\n",
	".gitignore":      "node_modules/\n",
	".hidden/config":  "hidden\n",
}

// NewRepo makes a git repository at dir (created) holding files in one commit
// with a fixed date, and returns dir.
func NewRepo(t testing.TB, dir string, files Files) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	Git(t, dir, "init", "-q", "-b", "main")
	for name, body := range files {
		mode := os.FileMode(0o644)
		if n, ok := strings.CutSuffix(name, "*"); ok {
			name, mode = n, 0o755
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	Git(t, dir, "add", "-A")
	Git(t, dir, "commit", "-q", "-m", "initial")
	return dir
}

// UniqueName returns prefix plus a random suffix, so concurrent test runs
// never share a repo slug (and so never share container names).
func UniqueName(prefix string) string {
	return fmt.Sprintf("%s%d-%06d", prefix, os.Getpid(), rand.IntN(1000000))
}

// CleanupRepo removes every container and volume made for repoRoot, when the
// test ends, pass or fail.
func CleanupRepo(t testing.TB, repoRoot, repoSlug string) {
	t.Cleanup(func() { RemoveAll(repoRoot, repoSlug) })
}

// RemoveAll force-removes the containers labelled with repoRoot and the
// volumes named after repoSlug or labelled with repoRoot, and the images
// built for it.
func RemoveAll(repoRoot, repoSlug string) {
	if ids, _ := Docker("ps", "-aq", "--filter", "label=dev.litterbox.repo="+repoRoot); ids != "" {
		_, _ = Docker(append([]string{"rm", "-f", "-v"}, strings.Fields(ids)...)...)
	}
	if vols, _ := Docker("volume", "ls", "-q", "--filter", "name=^litterbox-"+repoSlug+"-"); vols != "" {
		_, _ = Docker(append([]string{"volume", "rm", "-f"}, strings.Fields(vols)...)...)
	}
	// Those named after a [project] slug: base trees outlive their
	// sandboxes on purpose.
	if vols, _ := Docker("volume", "ls", "-q", "--filter", "label=dev.litterbox.repo="+repoRoot); vols != "" {
		_, _ = Docker(append([]string{"volume", "rm", "-f"}, strings.Fields(vols)...)...)
	}
	// Project images, built from the repository's Dockerfile.
	if imgs, _ := Docker("images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference=litterbox/"+repoSlug+"-*"); imgs != "" {
		_, _ = Docker(append([]string{"rmi", "-f"}, strings.Fields(imgs)...)...)
	}
}

// ReplayRepo makes the repository of a replay test, named repoName so that
// names match between recording and replaying: with -record a real one
// (whose containers are removed when the test ends), otherwise only its
// .git directory, every git command being served from the transcript.
func ReplayRepo(t testing.TB, repoName string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), repoName)
	if *Record {
		NewRepo(t, dir, SmallFiles)
		RemoveAll(dir, repoName)
		CleanupRepo(t, dir, repoName)
	} else if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Transcript returns a runner for a replay test: with -record, the real
// engine through a Recorder that saves to path when the test ends; otherwise a
// Replayer of path that fails the test on unexpected or missing commands.
// subst maps this run's temp paths to placeholders.
func Transcript(t testing.TB, path string, subst runner.Subst) runner.Runner {
	t.Helper()
	if *Record {
		rec := &runner.Recorder{Inner: Exec(), Subst: subst}
		t.Cleanup(func() {
			if err := rec.Save(path); err != nil {
				t.Errorf("saving transcript: %v", err)
			}
			if noise := otherRun(path); noise != "" {
				t.Errorf("transcript %s holds %s, another test's: record on an engine with no other sandboxes, one package at a time (go test -p 1)", filepath.Base(path), noise)
			}
		})
		return rec
	}
	rep, err := runner.LoadReplayer(path, subst)
	if err != nil {
		t.Fatalf("loading transcript (re-record with -record): %v", err)
	}
	t.Cleanup(func() {
		for _, p := range rep.Problems() {
			t.Errorf("transcript %s: %s", filepath.Base(path), p)
		}
	})
	return rep
}

// otherRun returns a temp directory of another test that the transcript at
// path holds ("" for none): this test's own are replaced by placeholders,
// so one left is what the engine listed of a test running beside it.
func otherRun(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	prefix := filepath.Join(os.TempDir(), "Test")
	i := bytes.Index(data, []byte(prefix))
	if i < 0 {
		return ""
	}
	rest := data[i+len(prefix):]
	if end := bytes.IndexAny(rest, `/"\`); end >= 0 {
		rest = rest[:end]
	}
	return string(prefix) + string(rest)
}

// SweepStale removes containers and volumes left by test runs that died
// without cleaning up (a test timeout panics past t.Cleanup). Test resources
// carry their creator's PID in their name (UniqueName), so only those of dead
// processes go and concurrent runs are never touched.
func SweepStale(prefixes ...string) {
	names, _ := Docker("ps", "-a", "--format", "{{.Names}}", "--filter", "label=dev.litterbox.managed=true")
	vols, _ := Docker("volume", "ls", "-q", "--filter", "label=dev.litterbox.managed=true")
	var rmC, rmV []string
	for _, n := range strings.Fields(names) {
		if stale(n, prefixes) {
			rmC = append(rmC, n)
		}
	}
	for _, v := range strings.Fields(vols) {
		if stale(v, prefixes) {
			rmV = append(rmV, v)
		}
	}
	if len(rmC) > 0 {
		_, _ = Docker(append([]string{"rm", "-f", "-v"}, rmC...)...)
	}
	if len(rmV) > 0 {
		_, _ = Docker(append([]string{"volume", "rm", "-f"}, rmV...)...)
	}
}

// stale reports whether name is litterbox-<prefix><pid>-... of a dead pid.
func stale(name string, prefixes []string) bool {
	rest, ok := strings.CutPrefix(name, "litterbox-")
	if !ok {
		return false
	}
	for _, p := range prefixes {
		digits, ok := strings.CutPrefix(rest, p)
		if !ok {
			continue
		}
		pidStr, _, _ := strings.Cut(digits, "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid <= 0 {
			return false
		}
		return syscall.Kill(pid, 0) == syscall.ESRCH
	}
	return false
}

// UseHelper builds the helper program, litterbox-helper (static, as the
// release and `make build` do), once for the test process and points
// LITTERBOX_HELPER at it, so sandboxes made by in-process Managers get a
// real helper. It returns a cleanup for TestMain.
func UseHelper() (cleanup func(), err error) {
	if os.Getenv("LITTERBOX_HELPER") != "" {
		return func() {}, nil
	}
	mod, err := Exec().Run(context.Background(), runner.Cmd{Name: "go", Args: []string{"env", "GOMOD"}})
	if err != nil {
		return nil, err
	}
	root := filepath.Dir(strings.TrimSpace(string(mod.Stdout)))
	dir, err := os.MkdirTemp("", "litterbox-helper-")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "litterbox-helper")
	if _, err := Exec().Run(context.Background(), runner.Cmd{Name: "go", Args: []string{"build", "-ldflags", "-s -w", "-o", bin, "./cmd/litterbox-helper"}, Dir: root, Env: []string{"CGO_ENABLED=0"}}); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("building the sandbox helper: %w", err)
	}
	os.Setenv("LITTERBOX_HELPER", bin)
	return func() { os.Unsetenv("LITTERBOX_HELPER"); os.RemoveAll(dir) }, nil
}

// Main runs an integration test binary's tests (TestMain's work) with a
// real helper (UseHelper) and the memory budget lifted: the suites run
// side by side on one engine, with more sandboxes at once than the budget
// lets a machine have (TestIntegrationHostLimits sets the budget it tests
// in its config). after runs once the tests have ended.
func Main(m *testing.M, after ...func()) {
	os.Setenv(config.BudgetEnv, "1000%")
	cleanup, err := UseHelper()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	for _, f := range after {
		f()
	}
	os.Exit(code)
}

// ReplayHelper is the helper file of a replay test: a real static litterbox
// when recording (it runs in the container), any file when replaying (the
// transcript knows the copy by name, not by content).
func ReplayHelper(t testing.TB) string {
	t.Helper()
	if !*Record {
		return os.Args[0]
	}
	cleanup, err := UseHelper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return os.Getenv("LITTERBOX_HELPER")
}
