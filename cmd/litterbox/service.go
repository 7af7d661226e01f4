package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/services"
)

// serviceOptions are what service was asked.
type serviceOptions struct {
	Name, Action, Service string
	JSON                  bool
	Lines                 int
	Raw                   bool
}

func newServiceCommand(p *cli.Program) *cobra.Command {
	var o serviceOptions
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
sandbox at ` + services.LogDir + `/SERVICE.log. A service prints what the agent
made it print: logs writes control characters (escape sequences that would
clear the screen or set the clipboard) as \xNN escapes unless --raw.`,
		Example: `  litterbox service fix-login status
  litterbox service fix-login restart web
  litterbox service fix-login logs web -n 50`,
		Args: cobra.RangeArgs(2, 3),
		ValidArgsFunction: func(c *cobra.Command, args []string, s string) ([]string, cobra.ShellCompDirective) {
			return serviceArgs(p, c, args, s)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name, o.Action = args[0], args[1]
			if len(args) == 3 {
				o.Service = args[2]
			}
			return runService(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print as JSON")
	cmd.Flags().IntVarP(&o.Lines, "lines", "n", 0, "logs: only the last N lines")
	cmd.Flags().BoolVar(&o.Raw, "raw", false, "logs: print the bytes as they are, terminal escape sequences included")
	return cmd
}

// runService starts, stops or restarts a service, or shows status or logs.
func runService(ctx context.Context, e *cli.Env, o serviceOptions) error {
	name, action, service := o.Name, o.Action, o.Service
	if !slices.Contains(services.Actions, action) && action != "logs" {
		return cli.Usagef("service: unknown action %q: want start, stop, restart, status or logs", action)
	}
	if service == "" && action != services.Status {
		return cli.Usagef("service %s %s: name the service (litterbox service %s status lists them)", name, action, name)
	}
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	if action == "logs" {
		return servicectl.Logs(ctx, m.Repo, name, service, o.Lines, o.Raw, e.Stdout)
	}
	states, err := servicectl.Control(ctx, m.Repo, name, action, service)
	if o.JSON && states != nil {
		if jerr := cli.WriteJSON(e.Stdout, states); jerr != nil {
			return jerr
		}
	} else {
		for _, s := range states {
			fmt.Fprintln(e.Stdout, s.String())
		}
	}
	return err
}

// serviceArgs completes sandbox names, then actions.
func serviceArgs(p *cli.Program, cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	switch len(args) {
	case 0:
		return p.NameArg(cmd, args, toComplete)
	case 1:
		return append(append([]string{}, services.Actions...), "logs"), cobra.ShellCompDirectiveNoFileComp
	}
	return nil, cobra.ShellCompDirectiveNoFileComp
}
