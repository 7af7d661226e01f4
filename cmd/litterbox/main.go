// Command litterbox gives coding agents sandboxes: containers holding a copy of
// the repository, whose every change lands as a commit on a branch for a human
// to review. See `litterbox --help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/helper"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// version is set at build time with -ldflags "-X main.version=..."; a `go
// install pkg@version` build reports its module version instead.
var version = "dev"

func init() {
	if bi, ok := debug.ReadBuildInfo(); ok && version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		version = bi.Main.Version
	}
}

func main() {
	// Copied into a sandbox as its helper, this same binary runs as that.
	if filepath.Base(os.Args[0]) == protocol.Name {
		os.Exit(helper.Main(os.Args[1:]))
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	p := cli.NewProgram(stdin, stdout, stderr)
	p.GitEnv = takeGitEnv()
	return runProgram(p, args)
}

// main runs the command args name and returns the exit code: 0, 1 for a
// failure, 2 for a usage error, or the code a command chose (exec).
func runProgram(p *cli.Program, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stderr := p.Stderr
	root := rootCommand(p)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var code cli.ExitCode
	if errors.As(err, &code) {
		return int(code)
	}
	fmt.Fprintln(stderr, "Error: "+cli.Sentence(cli.WithFix(err).Error()))
	var u cli.UsageError
	// cobra reports an unknown subcommand as a plain error.
	if errors.As(err, &u) || strings.HasPrefix(err.Error(), "unknown command") {
		return 2
	}
	return 1
}

// takeGitEnv reads the repository git's environment names (GIT_DIR,
// GIT_WORK_TREE), for a user who works that way, and removes it from this
// process: every git Litterbox runs is then told its repository explicitly,
// and a submodule's git never finds the superproject's instead.
func takeGitEnv() hostrepo.Location {
	var loc hostrepo.Location
	for _, v := range []struct {
		name string
		to   *string
	}{{"GIT_DIR", &loc.GitDir}, {"GIT_WORK_TREE", &loc.WorkTree}} {
		if p := os.Getenv(v.name); p != "" {
			if abs, err := filepath.Abs(p); err == nil {
				*v.to = abs
			}
		}
		os.Unsetenv(v.name)
	}
	return loc
}
