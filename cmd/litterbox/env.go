package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// app holds what every command shares: global flags, streams, the logger.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	log            *logrus.Logger

	repo     string
	logLevel string
	verbose  bool
	runtime  string
	// namespace is the Kubernetes namespace (--runtime kubernetes).
	namespace string
	context   string
	// audit makes the runner record each command in the audit trail of
	// the MCP tool call it serves.
	audit bool
	// gitEnv is the repository GIT_DIR and GIT_WORK_TREE named, if any.
	gitEnv sandbox.Location
	// configNeeded is set by commands that fail on a broken config file
	// themselves, so manager does not also warn about it.
	configNeeded bool
	// inner, when set, runs the commands instead of the host (unit tests
	// replay a transcript through it); opened, when set, sees each Manager
	// before use (they pin what a transcript was recorded with).
	inner  runner.Runner
	opened func(*sandbox.Manager)
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *app {
	log := logrus.New()
	log.SetOutput(stderr)
	log.SetFormatter(runner.LogFormatter{})
	return &app{stdin: stdin, stdout: stdout, stderr: stderr, log: log}
}

func (a *app) runner() runner.Runner {
	var r runner.Runner = runner.NewExec(a.log)
	if a.inner != nil {
		r = a.inner
	}
	if a.audit {
		return runner.Audit{Inner: r}
	}
	return r
}

// engine is the runtime the global flags choose.
func (a *app) engine() engine.Runtime {
	if a.runtime == "kubernetes" {
		return engine.Kubectl(a.context, a.namespace)
	}
	rt := engine.Runtime{Bin: a.runtime}
	if a.context != "" {
		rt.Global = []string{"--context", a.context}
	}
	return rt
}

// location is the repository to open: dir, or what GIT_DIR and
// GIT_WORK_TREE named.
func (a *app) location(dir string) sandbox.Location {
	loc := a.gitEnv
	loc.Dir = dir
	return loc
}

// manager opens the repository named by --repo (or the working directory).
func (a *app) manager(ctx context.Context) (*sandbox.Manager, error) {
	dir := a.repo
	if dir == "" {
		dir = "."
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--repo %s: not a directory", dir)
	}
	m, err := sandbox.OpenRepo(ctx, a.runner(), a.engine(), a.location(dir))
	if err != nil {
		return nil, err
	}
	if a.opened != nil {
		a.opened(m)
	}
	if m.ConfigErr != nil && !a.configNeeded {
		// Only create needs the config; the rest must keep working so a
		// broken file never stands between a user and their sandboxes.
		a.log.Warnf("ignoring the config files: %v", m.ConfigErr)
	}
	return m, nil
}
