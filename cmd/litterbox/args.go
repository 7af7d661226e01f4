package main

import (
	"github.com/spf13/cobra"
	"slices"
	"strings"
)

// dashArgs splits "NAME -- extra..." into the name and the extra arguments.
func dashArgs(cmd *cobra.Command, args []string) (string, []string, error) {
	at := cmd.ArgsLenAtDash()
	if at == -1 {
		if len(args) != 1 {
			return "", nil, usagef("%s takes one sandbox NAME (put extra git arguments after --)", cmd.Name())
		}
		return args[0], nil, nil
	}
	if at != 1 {
		return "", nil, usagef("%s takes one sandbox NAME before --", cmd.Name())
	}
	return args[0], args[1:], nil
}

// nameRequired is the usage error of a command given no sandbox name:
// it names the repository's sandboxes (when they can be listed), so the
// next try can pick one. or is the command's other way, if any.
func (p *program) nameRequired(cmd *cobra.Command, or string) error {
	msg := cmd.Name() + ": name the sandbox" + or
	if m, err := p.envOf().manager(cmd.Context()); err == nil {
		if list, err := m.List(cmd.Context(), false); err == nil {
			names := make([]string, len(list))
			for i, s := range list {
				names[i] = s.Name
			}
			if len(names) == 0 {
				return usagef("%s; this repository has no sandboxes (litterbox create NAME makes one)", msg)
			}
			return usagef("%s; this repository's: %s", msg, strings.Join(names, ", "))
		}
	}
	return usagef("%s", msg)
}

// actionArg completes the first argument from actions, and nothing after.
func actionArg(actions ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return actions, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// nameArg completes sandbox names of the current repository.
func (p *program) nameArg(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return p.namesArg(cmd, args, toComplete)
}

// namesArg completes sandbox names of the current repository for every
// argument, leaving out those already given.
func (p *program) namesArg(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	m, err := p.envOf().manager(cmd.Context())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := m.List(cmd.Context(), false)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(list))
	for _, s := range list {
		if !slices.Contains(args, s.Name) {
			names = append(names, s.Name+"\t"+s.Status)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// nameThenHostPath completes a sandbox name, then leaves the host path at
// argument hostArg (upload's SRC, download's DEST) to the shell's file
// completion; paths inside the sandbox get none.
func (p *program) nameThenHostPath(hostArg int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return p.nameArg(cmd, args, toComplete)
		case hostArg:
			return nil, cobra.ShellCompDirectiveDefault
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}
