package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/present"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// createOptions are what create was asked.
type createOptions struct {
	Name, Base, Network, Isolation string
	JSON, Quiet, OverLimit         bool
	// Run starts RunCmd (default [agent] command) in it once made.
	Run    bool
	RunCmd []string
}

func newCreateCommand(p *cli.Program) *cobra.Command {
	var o createOptions
	cmd := &cobra.Command{
		Use:   "create NAME [--run [-- CMD [ARG...]]]",
		Short: "Create a sandbox from HEAD (or --base) with its own branch",
		Long: `Create a sandbox: a branch litterbox/NAME at HEAD (or --base), and a container
holding that commit's tree at /src, made from devcontainer.json,
.litterbox.toml and .litterbox.local.toml as they are in the working tree
now ([docker] build first builds the image from that commit's Dockerfile and
context: committed files only, with no network unless the setup command may
have one). The setup
command runs in it, or its result comes from the setup cache (litterbox
cache), then the configured services start; each [[ports]] entry gets a free
host port on 127.0.0.1. --base takes a branch (a sandbox's litterbox/NAME
included), a tag, a remote-tracking branch or a commit id reachable from
one, optionally with ~N or ^N; the stash, reflog entries (@{...}) and
other revision syntax are refused. With --run, the agent ([agent] command,
or CMD) then runs in it as litterbox run does.`,
		Example: `  litterbox create fix-login
  litterbox create "Try the new parser" --base v1.2.0
  litterbox create fix-login --run -- claude`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 || len(args) > 1 && o.Run && cmd.ArgsLenAtDash() == 1 {
				return nil
			}
			msg := fmt.Sprintf("accepts 1 arg(s), received %d", len(args))
			if len(args) > 1 {
				msg += "; a command to run goes after --run and -- (litterbox create NAME --run -- CMD...)"
			}
			return errors.New(msg)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name, o.RunCmd = args[0], args[1:]
			if o.Run && o.JSON {
				return cli.Usagef("create: --run takes the terminal for the agent, so --json cannot go with it")
			}
			return runCreate(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().StringVar(&o.Base, "base", "", "branch, tag or commit id on one to start from, optionally with ~N or ^N (default HEAD)")
	cmd.Flags().StringVar(&o.Network, "network", "", `network for this sandbox, over the config's: "none", "bridge", a docker network, or "host" (taken only from here)`)
	cmd.Flags().StringVar(&o.Isolation, "isolation", "", `isolation for this sandbox, over the config's: "container" (the engine's runtime) or "gvisor" (a kernel of its own)`)
	cmd.Flags().BoolVar(&o.OverLimit, "over-limit", false, "create it even when the repository has [limits] sandboxes already (agents cannot)")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "do not show progress")
	cmd.Flags().BoolVar(&o.Run, "run", false, "then run the agent in it (litterbox run): [agent] command, or the command after --")
	return cmd
}

// runCreate makes the sandbox and prints it (progress on a terminal).
func runCreate(ctx context.Context, e *cli.Env, o createOptions) error {
	m, err := e.Open(ctx, cli.Opening{ConfigNeeded: true})
	if err != nil {
		return err
	}
	progress := showProgress(e, m, o.Quiet || o.JSON)
	c, err := m.Create(ctx, create.CreateOptions{Name: o.Name, BaseRef: o.Base, Network: o.Network, Isolation: o.Isolation, OverLimit: o.OverLimit, Progress: progress})
	if err != nil {
		return err
	}
	if c.Refill {
		e.Refiller(context.WithoutCancel(ctx), m.Repo.Root)()
	}
	if err := reportCreated(e, c, o.JSON); err != nil || !o.Run {
		return err
	}
	return runRun(ctx, e, runOptions{Name: c.Name, Cmd: o.RunCmd})
}

// showProgress shows create's steps, and a project image's build log, on
// a terminal: it returns the create's Progress, nil when quiet.
func showProgress(e *cli.Env, m *sandbox.Manager, quiet bool) func(step string, took time.Duration) {
	if quiet || !cli.IsTerminal(e.Stderr) {
		return nil
	}
	m.Creator.BuildOutput = e.Stderr
	return func(step string, took time.Duration) {
		fmt.Fprintf(e.Stderr, "  %-50s %6s\n", step, took.Round(time.Millisecond))
	}
}

// reportCreated prints a new sandbox, its warnings, and fails for a failed
// setup.
func reportCreated(e *cli.Env, c *create.Created, asJSON bool) error {
	if asJSON {
		if err := cli.WriteJSON(e.Stdout, c); err != nil {
			return err
		}
	} else {
		present.Created(e.Stdout, c)
	}
	for _, w := range c.Warnings {
		fmt.Fprintln(e.Stderr, "Warning: "+w)
	}
	if c.Status == create.StatusFailedSetup {
		return fmt.Errorf("sandbox '%s': %s litterbox shell %s opens it; litterbox delete %s removes it", c.Name, present.SetupFailure(c), c.Name, c.Name)
	}
	return nil
}
