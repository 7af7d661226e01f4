package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/config"
	"github.com/litterbox-dev/litterbox/ports"
	"github.com/litterbox-dev/litterbox/services"
)

func (a *app) portsCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ports NAME",
		Short: "Show the host ports of a sandbox's [[ports]]",
		Long: `Show where each [[ports]] entry of a sandbox is published: a host port on
127.0.0.1, chosen at create time from 3000-8000, forwarded to the container
port. Inside the sandbox the host port is in LITTERBOX_FWD_PORT_<NAME> and
PORT_<NAME>.`,
		Example: `  litterbox ports fix-login
  curl http://$(litterbox ports fix-login --json | jq -r '.[0].address')/`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.nameArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := a.manager(cmd.Context())
			if err != nil {
				return err
			}
			ports, err := m.Ports(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, ports)
			}
			if len(ports) == 0 {
				fmt.Fprintf(a.stdout, "Sandbox '%s' publishes no ports ([[ports]] in %s).\n", args[0], config.File)
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tADDRESS\tCONTAINER PORT\tENV")
			for _, p := range ports {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", p.Name, p.Reach(), p.ContainerPort, strings.Join(p.Env, " "))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func (a *app) serviceCommand() *cobra.Command {
	var asJSON bool
	var lines int
	cmd := &cobra.Command{
		Use:   "service NAME ACTION [SERVICE]",
		Short: "Start, stop, restart a sandbox's services, or show their status or logs",
		Long: `Control the services of [container.services.*]: start, stop, restart, status
(with pid and state) or logs. Services start after the setup command, keep
running across pause/resume, and start again when resume starts a stopped
sandbox. stop sends the configured stop signal (default SIGTERM) to the
service's process group, then SIGKILL after its stop-timeout (default 10 s);
restart sends the restart signal if one is configured, else stops and starts.
status without SERVICE shows every service. Logs are also readable inside the
sandbox at ` + services.LogDir + `/SERVICE.log.`,
		Example: `  litterbox service fix-login status
  litterbox service fix-login restart web
  litterbox service fix-login logs web -n 50`,
		Args:              cobra.RangeArgs(2, 3),
		ValidArgsFunction: a.serviceArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, action, service := args[0], args[1], ""
			if len(args) == 3 {
				service = args[2]
			}
			m, err := a.manager(cmd.Context())
			if err != nil {
				return err
			}
			if !slices.Contains(services.Actions, action) && action != "logs" {
				return usagef("service: unknown action %q: want start, stop, restart, status or logs", action)
			}
			if service == "" && action != services.Status {
				return usagef("service %s %s: name the service (litterbox service %s status lists them)", name, action, name)
			}
			if action == "logs" {
				return m.ServiceLogs(cmd.Context(), name, service, lines, a.stdout)
			}
			states, err := m.Service(cmd.Context(), name, action, service)
			if asJSON && states != nil {
				if jerr := writeJSON(a.stdout, states); jerr != nil {
					return jerr
				}
			} else {
				for _, s := range states {
					fmt.Fprintln(a.stdout, s.String())
				}
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	cmd.Flags().IntVarP(&lines, "lines", "n", 0, "logs: only the last N lines")
	return cmd
}

// serviceArgs completes sandbox names, then actions.
func (a *app) serviceArgs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return a.nameArg(cmd, args, toComplete)
	case 1:
		return append(append([]string{}, services.Actions...), "logs"), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}

func portSummary(ports []ports.Port) string {
	if len(ports) == 0 {
		return "-"
	}
	parts := make([]string, len(ports))
	for i, p := range ports {
		parts[i] = fmt.Sprintf("%s=%d", p.Name, p.HostPort)
	}
	return strings.Join(parts, ",")
}
