package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// DashArgs splits "NAME -- extra..." into the name and the extra arguments.
func DashArgs(cmd *cobra.Command, args []string) (string, []string, error) {
	at := cmd.ArgsLenAtDash()
	if at == -1 {
		if len(args) != 1 {
			return "", nil, Usagef("%s takes one sandbox NAME (put extra git arguments after --)", cmd.Name())
		}
		return args[0], nil, nil
	}
	if at != 1 {
		return "", nil, Usagef("%s takes one sandbox NAME before --", cmd.Name())
	}
	return args[0], args[1:], nil
}

// NameRequired is the usage error of a command given no sandbox name:
// it names the repository's sandboxes (when they can be listed), so the
// next try can pick one. or is the command's other way, if any.
func (p *Program) NameRequired(cmd *cobra.Command, or string) error {
	msg := cmd.Name() + ": name the sandbox" + or
	if m, err := p.EnvOf().Manager(cmd.Context()); err == nil {
		if list, err := m.List(cmd.Context(), false); err == nil {
			names := make([]string, len(list))
			for i, s := range list {
				names[i] = s.Name
			}
			if len(names) == 0 {
				return Usagef("%s; this repository has no sandboxes (litterbox create NAME makes one)", msg)
			}
			return Usagef("%s; this repository's: %s", msg, strings.Join(names, ", "))
		}
	}
	return Usagef("%s", msg)
}

// ActionArg completes the first argument from actions, and nothing after.
func ActionArg(actions ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 {
			return actions, cobra.ShellCompDirectiveNoFileComp
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// NameArg completes sandbox names of the current repository.
func (p *Program) NameArg(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return p.NamesArg(cmd, args, toComplete)
}

// NamesArg completes sandbox names of the current repository for every
// argument, leaving out those already given.
func (p *Program) NamesArg(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	m, err := p.EnvOf().Manager(cmd.Context())
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

// NameThenHostPath completes a sandbox name, then leaves the host path at
// argument hostArg (upload's SRC, download's DEST) to the shell's file
// completion; paths inside the sandbox get none.
func (p *Program) NameThenHostPath(hostArg int) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return p.NameArg(cmd, args, toComplete)
		case hostArg:
			return nil, cobra.ShellCompDirectiveDefault
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}
