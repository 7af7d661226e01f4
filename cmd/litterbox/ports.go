package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/config"
)

// portsOptions are what ports was asked.
type portsOptions struct {
	Name    string
	JSON    bool
	Forward bool
}

func newPortsCommand(p *cli.Program) *cobra.Command {
	var o portsOptions
	cmd := &cobra.Command{
		Use:   "ports NAME",
		Short: "Show the host ports of a sandbox's [[ports]]",
		Long: `Show where each [[ports]] entry of a sandbox is published: a host port on
127.0.0.1, chosen at create time from 3000-8000, forwarded to the container
port. Inside the sandbox the host port is in LITTERBOX_FWD_PORT_<NAME> and
PORT_<NAME>.

On Kubernetes (--runtime kubernetes) nothing is published: --forward runs
kubectl port-forward from those host ports to the pod until Ctrl-C.`,
		Example: `  litterbox ports fix-login
  curl http://$(litterbox ports fix-login --json | jq -r '.[0].address')/`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: p.NameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runPorts(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	cmd.Flags().BoolVar(&o.Forward, "forward", false, "kubernetes: forward the ports from 127.0.0.1 (kubectl port-forward) until Ctrl-C")
	return cmd
}

// runPorts prints where each of the sandbox's ports is published.
func runPorts(ctx context.Context, e *cli.Env, o portsOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	if o.Forward {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		return m.Forward(ctx, o.Name, e.Stderr)
	}
	ports, err := m.Ports(ctx, o.Name)
	if err != nil {
		return err
	}
	if o.JSON {
		return cli.WriteJSON(e.Stdout, ports)
	}
	if len(ports) == 0 {
		fmt.Fprintf(e.Stdout, "Sandbox '%s' publishes no ports ([[ports]] in %s).\n", o.Name, config.File)
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tADDRESS\tCONTAINER PORT\tENV")
	for _, p := range ports {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", p.Name, p.Reach(), p.ContainerPort, strings.Join(p.Env, " "))
	}
	return tw.Flush()
}
