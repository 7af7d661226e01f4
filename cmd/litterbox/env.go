package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// env is what a command runs with: the streams, the runner, the runtime
// and the repository the global flags chose. The root command makes it
// once the command line is parsed; nothing changes it after, so a run
// function depends only on it and its own options.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	log            *logrus.Logger
	// run runs the commands: on the host, or a test's transcript.
	run runner.Runner

	// repo is --repo, empty for the working directory.
	repo string
	// runtime, context and namespace are --runtime, --context and
	// --namespace (the Kubernetes namespace).
	runtime, context, namespace string
	// gitEnv is the repository GIT_DIR and GIT_WORK_TREE named, if any.
	gitEnv hostrepo.Location
	// opened, when set, sees each Manager before use (replay tests pin
	// what a transcript was recorded with).
	opened func(*sandbox.Manager)
}

// opening is how a command opens the repository.
type opening struct {
	// configNeeded is for the commands that fail on a broken config file
	// themselves, so manager does not also warn about it.
	configNeeded bool
	// audited makes the runner record each command in the audit trail of
	// the MCP tool call it serves.
	audited bool
}

func (e *env) runner(audited bool) runner.Runner {
	if audited {
		return runner.Audit{Inner: e.run}
	}
	return e.run
}

// engine is the runtime the global flags choose.
func (e *env) engine() engine.Runtime {
	if e.runtime == "kubernetes" {
		return engine.Kubectl(e.context, e.namespace)
	}
	rt := engine.Runtime{Bin: e.runtime}
	if e.context != "" {
		rt.Global = []string{"--context", e.context}
	}
	return rt
}

// engineArgs are the global flags that point another litterbox process
// at this one's engine: --context and --namespace, when given.
func (e *env) engineArgs() []string {
	var args []string
	if e.context != "" {
		args = append(args, "--context", e.context)
	}
	if e.namespace != "" {
		args = append(args, "--namespace", e.namespace)
	}
	return args
}

// repoDir is the directory --repo names, or the working directory.
func (e *env) repoDir() string {
	if e.repo == "" {
		return "."
	}
	return e.repo
}

// location is the repository to open: dir, or what GIT_DIR and
// GIT_WORK_TREE named.
func (e *env) location(dir string) hostrepo.Location {
	loc := e.gitEnv
	loc.Dir = dir
	return loc
}

// manager opens the repository named by --repo (or the working directory).
func (e *env) manager(ctx context.Context) (*sandbox.Manager, error) {
	return e.open(ctx, opening{})
}

// open opens the repository as manager does, the way how says.
func (e *env) open(ctx context.Context, how opening) (*sandbox.Manager, error) {
	dir := e.repoDir()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--repo %s: not a directory", dir)
	}
	m, err := sandbox.OpenRepo(ctx, e.runner(how.audited), e.engine(), e.location(dir))
	if err != nil {
		return nil, err
	}
	m.Creator.Refill = e.refiller(context.WithoutCancel(ctx), m.Repo.Root)
	if e.opened != nil {
		e.opened(m)
	}
	if m.Repo.ConfigErr != nil && !how.configNeeded {
		// Only create needs the config; the rest must keep working so a
		// broken file never stands between a user and their sandboxes.
		e.log.Warnf("ignoring the config files: %v", m.Repo.ConfigErr)
	}
	return m, nil
}
