package main

import (
	"io"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// program is one run of litterbox: what is known before its command line is
// parsed (streams, logger, the repository git's environment, test hooks),
// the global flags as parsed, and the env the command then runs with.
type program struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	log            *logrus.Logger
	// gitEnv is the repository GIT_DIR and GIT_WORK_TREE named, if any.
	gitEnv hostrepo.Location
	// inner, when set, runs the commands instead of the host (unit tests
	// replay a transcript through it); opened, when set, sees each Manager
	// before use (they pin what a transcript was recorded with).
	inner  runner.Runner
	opened func(*sandbox.Manager)

	// flags are the global flags; the root command binds them.
	flags globalOptions
	// env is made by the root command's PersistentPreRunE, before any
	// command runs.
	env *env
}

// globalOptions are the flags every command takes.
type globalOptions struct {
	repo     string
	logLevel string
	verbose  bool
	runtime  string
	// namespace is the Kubernetes namespace (--runtime kubernetes).
	namespace string
	context   string
}

func newProgram(stdin io.Reader, stdout, stderr io.Writer) *program {
	log := logrus.New()
	log.SetOutput(stderr)
	log.SetFormatter(runner.LogFormatter{})
	return &program{stdin: stdin, stdout: stdout, stderr: stderr, log: log}
}

// envOf is the env of the global flags as they are now, unchecked. The root
// command makes the commands' env with it once it has checked the flags;
// completion uses it directly, since it parses the flags after the root's
// PersistentPreRunE ran.
func (p *program) envOf() *env {
	var r runner.Runner = runner.NewExec(p.log)
	if p.inner != nil {
		r = p.inner
	}
	return &env{
		stdin: p.stdin, stdout: p.stdout, stderr: p.stderr, log: p.log, run: r,
		repo: p.flags.repo, runtime: p.flags.runtime, context: p.flags.context, namespace: p.flags.namespace,
		gitEnv: p.gitEnv, opened: p.opened,
	}
}
