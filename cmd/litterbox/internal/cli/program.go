// Package cli is what every litterbox command shares: the program and its
// global flags, the env a command runs with (streams, runner, engine, the
// repository it opens), output, usage errors and argument completion.
package cli

import (
	"io"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// Program is one run of litterbox: what is known before its command line is
// parsed (streams, logger, the repository git's environment, test hooks),
// the global flags as parsed, and the env the command then runs with.
type Program struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Log            *logrus.Logger
	// GitEnv is the repository GIT_DIR and GIT_WORK_TREE named, if any.
	GitEnv hostrepo.Location
	// Inner, when set, runs the commands instead of the host (unit tests
	// replay a transcript through it); Opened, when set, sees each Manager
	// before use (they pin what a transcript was recorded with).
	Inner  runner.Runner
	Opened func(*sandbox.Manager)

	// Flags are the global flags; the root command binds them.
	Flags GlobalOptions
	// Env is made by the root command's PersistentPreRunE, before any
	// command runs.
	Env *Env
}

// GlobalOptions are the flags every command takes.
type GlobalOptions struct {
	Repo     string
	LogLevel string
	Verbose  bool
	Runtime  string
	// Namespace is the Kubernetes namespace (--runtime kubernetes).
	Namespace string
	Context   string
}

func NewProgram(stdin io.Reader, stdout, stderr io.Writer) *Program {
	log := logrus.New()
	log.SetOutput(stderr)
	log.SetFormatter(runner.LogFormatter{})
	return &Program{Stdin: stdin, Stdout: stdout, Stderr: stderr, Log: log}
}

// EnvOf is the env of the global flags as they are now, unchecked. The root
// command makes the commands' env with it once it has checked the flags;
// completion uses it directly, since it parses the flags after the root's
// PersistentPreRunE ran.
func (p *Program) EnvOf() *Env {
	var r runner.Runner = runner.NewExec(p.Log)
	if p.Inner != nil {
		r = p.Inner
	}
	return &Env{
		Stdin: p.Stdin, Stdout: p.Stdout, Stderr: p.Stderr, Log: p.Log, Run: r,
		Repo: p.Flags.Repo, Runtime: p.Flags.Runtime, Context: p.Flags.Context, Namespace: p.Flags.Namespace,
		GitEnv: p.GitEnv, Opened: p.Opened,
	}
}
