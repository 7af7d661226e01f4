package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/dockercli"
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

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "litterbox",
		Short: "Sandboxes for coding agents, with every change on a git branch",
		Long: `Litterbox gives each coding agent a sandbox: a container holding a copy of the
repository at /src and a git branch litterbox/<name> on the host. Agents work
through MCP tools (litterbox mcp); every change they make becomes a commit on
their branch. You review and accept the work with this CLI.`,
		Version:           version,
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: a.setup,
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	f := root.PersistentFlags()
	f.StringVar(&a.repo, "repo", "", "repository to work on (default: the git root above the working directory)")
	f.StringVar(&a.logLevel, "log-level", "warn", "log level: error, warn, info, debug (debug shows every docker/git command)")
	f.BoolVarP(&a.verbose, "verbose", "v", false, "same as --log-level debug: print every docker/git command as a pasteable line")
	defRuntime := os.Getenv("LITTERBOX_RUNTIME")
	if defRuntime == "" {
		defRuntime = "docker"
	}
	f.StringVar(&a.runtime, "runtime", defRuntime, "container runtime: docker, podman or kubernetes (env LITTERBOX_RUNTIME)")
	f.StringVar(&a.context, "context", "", "docker context, or kubectl context with --runtime kubernetes (default: the current one)")
	f.StringVar(&a.namespace, "namespace", "", "Kubernetes namespace, with --runtime kubernetes (default: the context's)")

	root.AddCommand(
		a.createCommand(),
		a.forkCommand(),
		a.cacheCommand(),
		a.trustCommand(),
		a.listCommand(),
		a.pauseCommand(),
		a.resumeCommand(),
		a.deleteCommand(),
		a.shellCommand(),
		a.execCommand(),
		a.milestoneCommand(),
		a.diffCommand(),
		a.logCommand(),
		a.applyCommand(false),
		a.applyCommand(true),
		a.uploadCommand(),
		a.portsCommand(),
		a.serviceCommand(),
		a.downloadCommand(),
		a.mcpCommand(),
		a.doctorCommand(),
		a.mcpConfigCommand(),
	)
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			c.Example = "  source <(litterbox completion bash)\n  litterbox completion zsh > \"${fpath[1]}/_litterbox\"\n  litterbox completion fish > ~/.config/fish/completions/litterbox.fish"
		}
		wrapArgs(c)
	}
	return root
}

// wrapArgs marks argument-count errors as usage errors (exit 2).
func wrapArgs(c *cobra.Command) {
	if c.Args == nil {
		return
	}
	check := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{fmt.Errorf("%s: %w (see 'litterbox %s --help')", cmd.Name(), err, cmd.Name())}
		}
		return nil
	}
}

func (a *app) setup(cmd *cobra.Command, _ []string) error {
	level := a.logLevel
	if a.verbose {
		level = "debug"
	}
	lvl, err := logrus.ParseLevel(level)
	if err != nil {
		return usagef("--log-level %q: want error, warn, info or debug", level)
	}
	a.log.SetLevel(lvl)
	switch a.runtime {
	case "docker", "podman", "kubernetes":
	default:
		if !strings.Contains(a.runtime, "/") {
			return usagef("--runtime %q: want docker, podman or kubernetes", a.runtime)
		}
	}
	if a.namespace != "" && a.runtime != "kubernetes" {
		return usagef("--namespace is a kubernetes option (--runtime kubernetes)")
	}
	if a.context != "" && dockercli.FlavorOf(a.runtime) == dockercli.Podman {
		return usagef("--context is a docker option; podman chooses its engine with CONTAINER_HOST or its connections")
	}
	return nil
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

// nameArg completes sandbox names of the current repository.
func (a *app) nameArg(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	m, err := a.manager(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := m.List(cmd.Context(), false)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(list))
	for _, s := range list {
		names = append(names, s.Name+"\t"+s.Status)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// nameThenHostPath completes a sandbox name, then leaves the host path at
// argument hostArg (upload's SRC, download's DEST) to the shell's file
// completion; paths inside the sandbox get none.
func (a *app) nameThenHostPath(hostArg int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return a.nameArg(cmd, args, toComplete)
		case hostArg:
			return nil, cobra.ShellCompDirectiveDefault
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}
