package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/dockercli"
)

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
