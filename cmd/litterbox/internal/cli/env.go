package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// Env is what a command runs with: the streams, the runner, the runtime
// and the repository the global flags chose. The root command makes it
// once the command line is parsed; nothing changes it after, so a run
// function depends only on it and its own options.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Log            *logrus.Logger
	// Run runs the commands: on the host, or a test's transcript.
	Run runner.Runner

	// Repo is --repo, empty for the working directory.
	Repo string
	// Runtime, Context and Namespace are --runtime, --context and
	// --namespace (the Kubernetes namespace).
	Runtime, Context, Namespace string
	// GitEnv is the repository GIT_DIR and GIT_WORK_TREE named, if any.
	GitEnv hostrepo.Location
	// Opened, when set, sees each Manager before use (replay tests pin
	// what a transcript was recorded with).
	Opened func(*sandbox.Manager)
}

// Opening is how a command opens the repository.
type Opening struct {
	// ConfigNeeded is for the commands that fail on a broken config file
	// themselves, so manager does not also warn about it.
	ConfigNeeded bool
	// Audited makes the runner record each command in the audit trail of
	// the MCP tool call it serves.
	Audited bool
}

func (e *Env) Runner(audited bool) runner.Runner {
	if audited {
		return runner.Audit{Inner: e.Run}
	}
	return e.Run
}

// Engine is the runtime the global flags choose.
func (e *Env) Engine() engine.Runtime {
	if e.Runtime == "kubernetes" {
		return engine.Kubectl(e.Context, e.Namespace)
	}
	rt := engine.Runtime{Bin: e.Runtime}
	if e.Context != "" {
		rt.Global = []string{"--context", e.Context}
	}
	return rt
}

// EngineArgs are the global flags that point another litterbox process
// at this one's engine: --context and --namespace, when given.
func (e *Env) EngineArgs() []string {
	var args []string
	if e.Context != "" {
		args = append(args, "--context", e.Context)
	}
	if e.Namespace != "" {
		args = append(args, "--namespace", e.Namespace)
	}
	return args
}

// RepoDir is the directory --repo names, or the working directory.
func (e *Env) RepoDir() string {
	if e.Repo == "" {
		return "."
	}
	return e.Repo
}

// Location is the repository to open: dir, or what GIT_DIR and
// GIT_WORK_TREE named.
func (e *Env) Location(dir string) hostrepo.Location {
	loc := e.GitEnv
	loc.Dir = dir
	return loc
}

// Manager opens the repository named by --repo (or the working directory).
func (e *Env) Manager(ctx context.Context) (*sandbox.Manager, error) {
	return e.Open(ctx, Opening{})
}

// Open opens the repository as manager does, the way how says.
func (e *Env) Open(ctx context.Context, how Opening) (*sandbox.Manager, error) {
	dir := e.RepoDir()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("--repo %s: not a directory", dir)
	}
	m, err := sandbox.OpenRepo(ctx, e.Runner(how.Audited), e.Engine(), e.Location(dir))
	if err != nil {
		return nil, err
	}
	if e.Opened != nil {
		e.Opened(m)
	}
	if m.Repo.ConfigErr != nil && !how.ConfigNeeded {
		// Only create needs the config; the rest must keep working so a
		// broken file never stands between a user and their sandboxes.
		e.Log.Warnf("ignoring the config files: %v", m.Repo.ConfigErr)
	}
	return m, nil
}

// Refiller starts `litterbox pool fill --quiet` for this repository and
// runtime, detached: the create that took an entry returns at once, and
// no daemon is left once the pool is full.
func (e *Env) Refiller(ctx context.Context, root string) func() {
	return func() {
		exe, err := os.Executable()
		if err != nil {
			e.Log.Warnf("warm pool: not refilled: %v", err)
			return
		}
		args := slices.Concat([]string{"--repo", root, "--runtime", e.Runtime, "--log-level", "error"}, e.EngineArgs(), []string{"pool", "fill", "--quiet"})
		if _, err := e.Run.Run(ctx, runner.Cmd{Name: filepath.Clean(exe), Args: args, Detach: true}); err != nil {
			e.Log.Warnf("warm pool: not refilled: %s", strings.TrimSpace(err.Error()))
		}
	}
}
