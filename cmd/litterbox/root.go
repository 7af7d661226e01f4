package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/reviewcmd"
	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/systemcmd"
	"github.com/litterbox-dev/litterbox/dockercli"
)

// rootCommand is litterbox with its global flags and every command.
func rootCommand(p *cli.Program) *cobra.Command {
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
		PersistentPreRunE: func(c *cobra.Command, args []string) error { return setup(p, c, args) },
	}
	root.SetIn(p.Stdin)
	root.SetOut(p.Stdout)
	root.SetErr(p.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.UsageError{Err: err} })
	bindGlobalFlags(p, root)
	root.AddCommand(
		newCreateCommand(p),
		newForkCommand(p),
		systemcmd.NewCacheCommand(p),
		systemcmd.NewPoolCommand(p),
		systemcmd.NewTrustCommand(p),
		newListCommand(p),
		newPauseCommand(p),
		newResumeCommand(p),
		newDeleteCommand(p),
		newShellCommand(p),
		newRunCommand(p),
		newExecCommand(p),
		reviewcmd.NewMilestoneCommand(p),
		reviewcmd.NewRejectCommand(p),
		reviewcmd.NewSyncCommand(p),
		reviewcmd.NewDiffCommand(p),
		reviewcmd.NewLogCommand(p),
		newWatchCommand(p),
		reviewcmd.NewApplyCommand(p, false),
		reviewcmd.NewApplyCommand(p, true),
		newUploadCommand(p),
		newPortsCommand(p),
		newServiceCommand(p),
		newDownloadCommand(p),
		newMCPCommand(p),
		systemcmd.NewDoctorCommand(p),
		systemcmd.NewMCPConfigCommand(p),
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

// bindGlobalFlags binds the flags every command takes to p.flags.
func bindGlobalFlags(p *cli.Program, root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringVar(&p.Flags.Repo, "repo", "", "repository to work on (default: the git root above the working directory)")
	f.StringVar(&p.Flags.LogLevel, "log-level", "warn", "log level: error, warn, info, debug (debug shows every docker/git command)")
	f.BoolVarP(&p.Flags.Verbose, "verbose", "v", false, "same as --log-level debug: print every docker/git command as a pasteable line")
	defRuntime := os.Getenv("LITTERBOX_RUNTIME")
	if defRuntime == "" {
		defRuntime = "docker"
	}
	f.StringVar(&p.Flags.Runtime, "runtime", defRuntime, "container runtime: docker, podman or kubernetes (env LITTERBOX_RUNTIME)")
	f.StringVar(&p.Flags.Context, "context", "", "docker context, or kubectl context with --runtime kubernetes (default: the current one)")
	f.StringVar(&p.Flags.Namespace, "namespace", "", "Kubernetes namespace, with --runtime kubernetes (default: the context's)")
}

// wrapArgs marks argument-count errors as usage errors (exit 2).
func wrapArgs(c *cobra.Command) {
	if c.Args == nil {
		return
	}
	check := c.Args
	c.Args = func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return cli.UsageError{Err: fmt.Errorf("%s: %w (see 'litterbox %s --help')", cmd.Name(), err, cmd.Name())}
		}
		return nil
	}
}

// setup checks the global flags, sets the log level and makes the env the
// command runs with.
func setup(p *cli.Program, _ *cobra.Command, _ []string) error {
	g := p.Flags
	level := g.LogLevel
	if g.Verbose {
		level = "debug"
	}
	lvl, err := logrus.ParseLevel(level)
	if err != nil {
		return cli.Usagef("--log-level %q: want error, warn, info or debug", level)
	}
	p.Log.SetLevel(lvl)
	switch g.Runtime {
	case "docker", "podman", "kubernetes":
	default:
		if !strings.Contains(g.Runtime, "/") {
			return cli.Usagef("--runtime %q: want docker, podman or kubernetes", g.Runtime)
		}
	}
	if g.Namespace != "" && g.Runtime != "kubernetes" {
		return cli.Usagef("--namespace is a kubernetes option (--runtime kubernetes)")
	}
	if g.Context != "" && dockercli.FlavorOf(g.Runtime) == dockercli.Podman {
		return cli.Usagef("--context is a docker option; podman chooses its engine with CONTAINER_HOST or its connections")
	}
	p.Env = p.EnvOf()
	return nil
}
