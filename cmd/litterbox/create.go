package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// createOptions are what create was asked.
type createOptions struct {
	Name, Base, Network string
	JSON, Quiet         bool
}

func newCreateCommand(p *program) *cobra.Command {
	var o createOptions
	cmd := &cobra.Command{
		Use:   "create NAME",
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
other revision syntax are refused.`,
		Example: `  litterbox create fix-login
  litterbox create "Try the new parser" --base v1.2.0`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runCreate(cmd.Context(), p.env, o)
		},
	}
	cmd.Flags().StringVar(&o.Base, "base", "", "branch, tag or commit id on one to start from, optionally with ~N or ^N (default HEAD)")
	cmd.Flags().StringVar(&o.Network, "network", "", `network for this sandbox, over the config's: "none", "bridge", a docker network, or "host" (taken only from here)`)
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&o.Quiet, "quiet", "q", false, "do not show progress")
	return cmd
}

// runCreate makes the sandbox and prints it (progress on a terminal).
func runCreate(ctx context.Context, e *env, o createOptions) error {
	m, err := e.open(ctx, opening{configNeeded: true})
	if err != nil {
		return err
	}
	e.showProgress(m, o.Quiet || o.JSON)
	c, err := m.Create(ctx, sandbox.CreateOptions{Name: o.Name, BaseRef: o.Base, Network: o.Network})
	if err != nil {
		return err
	}
	return e.reportCreated(c, o.JSON)
}

// showProgress shows create's steps, and a project image's build log, on
// a terminal.
func (e *env) showProgress(m *sandbox.Manager, quiet bool) {
	if quiet || !isTerminal(e.stderr) {
		return
	}
	m.Progress = func(step string, took time.Duration) {
		fmt.Fprintf(e.stderr, "  %-50s %6s\n", step, took.Round(time.Millisecond))
	}
	m.BuildOutput = e.stderr
}

// reportCreated prints a new sandbox, its warnings, and fails for a failed
// setup.
func (e *env) reportCreated(c *sandbox.Created, asJSON bool) error {
	if asJSON {
		if err := writeJSON(e.stdout, c); err != nil {
			return err
		}
	} else {
		printCreated(e.stdout, c)
	}
	for _, w := range c.Warnings {
		fmt.Fprintln(e.stderr, "Warning: "+w)
	}
	if c.Status == sandbox.StatusFailedSetup {
		return fmt.Errorf("the setup command of sandbox '%s' exited with code %d; the sandbox is kept, marked failed-setup (litterbox delete %s removes it)", c.Name, c.Setup.ExitCode, c.Name)
	}
	return nil
}

func printCreated(w io.Writer, c *sandbox.Created) {
	fmt.Fprintf(w, "Created sandbox '%s'\n", c.Name)
	fmt.Fprintf(w, "  branch:    %s\n  container: %s\n  base:      %s\n  workdir:   %s\n", c.Branch, c.Container, c.Base, c.Workdir)
	files := "defaults (no " + config.File + ")"
	if len(c.ConfigFiles) > 0 {
		files = strings.Join(c.ConfigFiles, ", ")
	}
	network := c.Network
	if len(c.Allow) > 0 {
		network += " (" + strings.Join(c.Allow, ", ") + ")"
	}
	if c.SetupNetwork != "" {
		network += "; the setup command had " + c.SetupNetwork + ", taken away after it"
	}
	fmt.Fprintf(w, "  config:    %s\n  network:   %s\n", files, network)
	if c.Storage != "" {
		fmt.Fprintf(w, "  storage:   %s\n", c.Storage)
	}
	for _, l := range c.Weakened {
		fmt.Fprintf(w, "  weakened:  %s\n", l)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(w, "  ignored:   %s\n", n)
	}
	if c.ForkedFrom != "" {
		fmt.Fprintf(w, "  forked:    from '%s' (its files and image %s; no setup)\n", c.ForkedFrom, c.Image)
	}
	if b := c.Build; b != nil {
		how := "built"
		if b.Cached {
			how = "unchanged, not rebuilt"
		}
		fmt.Fprintf(w, "  image:     %s (%s from %s)\n", c.Image, how, b.Dockerfile)
	}
	switch sc := c.SetupCache; {
	case c.ForkedFrom != "":
	case sc != nil && sc.Hit:
		fmt.Fprintf(w, "  setup:     %s (from the setup cache %s: %d files, %s, made by '%s'; not run)\n", c.Setup.Command, sc.Key, sc.Files, sandbox.HumanSize(sc.Bytes), sc.From)
	default:
		fmt.Fprintf(w, "  setup:     %s (exit %d)\n", c.Setup.Command, c.Setup.ExitCode)
		if sc != nil && sc.Saved {
			fmt.Fprintf(w, "  cache:     kept as %s (%d files, %s): the next create with this key skips the setup\n", sc.Key, sc.Files, sandbox.HumanSize(sc.Bytes))
		}
	}
	for _, s := range []string{c.Setup.Stdout, c.Setup.Stderr} {
		if s != "" {
			fmt.Fprint(w, indent(s, "    "))
		}
	}
	for _, p := range c.Ports {
		fmt.Fprintf(w, "  port:      %s %s -> %d (%s)\n", p.Name, p.Reach(), p.ContainerPort, strings.Join(p.Env, ", "))
	}
	for _, s := range c.Services {
		fmt.Fprintf(w, "  service:   %s\n", s.String())
	}
}
