//go:build integration

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// builtBinary is the litterbox binary as make builds it, run as a user
// runs it: one process a command.
func builtBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "litterbox")
	if _, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "go", Args: []string{"build", "-ldflags", "-s -w", "-o", bin, "."}}); err != nil {
		b.Fatal(err)
	}
	return bin
}

// cliSandbox is a sandbox "work" of a small repository, made by the
// binary, and its container's name.
func cliSandbox(b *testing.B) (bin, repo, container string) {
	b.Helper()
	ctx := context.Background()
	bin = builtBinary(b)
	repo = filepath.Join(b.TempDir(), testenv.UniqueName("lbbench"))
	testenv.NewRepo(b, repo, testenv.SmallFiles)
	m, err := sandbox.Open(ctx, testenv.Exec(), engine.Docker, repo, config.Default())
	if err != nil {
		b.Fatal(err)
	}
	testenv.CleanupRepo(b, m.Repo.Root, m.Repo.RepoSlug)
	if _, err := testenv.Exec().Run(ctx, runner.Cmd{Name: bin, Args: []string{"--repo", repo, "create", "work", "-q"}}); err != nil {
		b.Fatal(err)
	}
	return bin, repo, m.Repo.Names("work").Container
}

// BenchmarkCLIExec is `litterbox exec NAME -- true` as a user types it:
// the process's start, the call through the helper, and its scan.
func BenchmarkCLIExec(b *testing.B) {
	bin, repo, _ := cliSandbox(b)
	r := testenv.Exec()
	for b.Loop() {
		if _, err := r.Run(context.Background(), runner.Cmd{Name: bin, Args: []string{"--repo", repo, "exec", "work", "--", "true"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawCLIExec is its floor: docker exec of true in the container.
func BenchmarkRawCLIExec(b *testing.B) {
	_, _, container := cliSandbox(b)
	r := testenv.Exec()
	for b.Loop() {
		if _, err := r.Run(context.Background(), runner.Cmd{Name: "docker", Args: []string{"exec", "--user", "1000:1000", "--workdir", "/src", container, "true"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCLIStart is the binary's start alone (`litterbox --version`):
// what CLIExec pays before its one git rev-parse and its call.
func BenchmarkCLIStart(b *testing.B) {
	bin := builtBinary(b)
	r := testenv.Exec()
	for b.Loop() {
		if _, err := r.Run(context.Background(), runner.Cmd{Name: bin, Args: []string{"--version"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHelperCat is a docker exec of the sandbox's helper that prints
// a small file: the helper's start in the container, which every call
// pays over a raw docker exec, without the command, the scan or the host.
func BenchmarkHelperCat(b *testing.B) {
	_, _, container := cliSandbox(b)
	r := testenv.Exec()
	res, err := r.Run(context.Background(), runner.Cmd{Name: "docker", Args: []string{"exec", container, "sh", "-c", "ls -d /.litterbox/*/litterbox-helper"}})
	if err != nil {
		b.Fatal(err)
	}
	helper := strings.TrimSpace(string(res.Stdout))
	for b.Loop() {
		if _, err := r.Run(context.Background(), runner.Cmd{Name: "docker", Args: []string{"exec", "--user", "1000:1000", "--workdir", "/src", container, helper, "cat", "/src/README.md", "4096"}}); err != nil {
			b.Fatal(err)
		}
	}
}
