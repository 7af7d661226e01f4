// Package present renders what Litterbox made for its two readers: a person
// at the command line, and an agent reading an MCP tool's result. The two
// renderings of a fact sit side by side, so a fact added for one reader is
// seen beside the other's.
package present

import (
	"fmt"
	"io"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/result"
)

// Created writes a new sandbox for a person: aligned "label: value" lines
// under "Created sandbox 'NAME'", the setup command's output indented. Its
// warnings and a failed setup are the caller's to report (stderr, the exit
// status).
func Created(w io.Writer, c *create.Created) {
	fmt.Fprintf(w, "Created sandbox '%s'\n", c.Name)
	line := func(label, value string) { fmt.Fprintf(w, "  %-11s%s\n", label+":", value) }
	where(c, line)
	line("config", configFiles(c, "defaults (no "+config.File+")"))
	if c.Build == nil && c.ForkedFrom == "" {
		line("image", imageOrigin(c))
	}
	network := c.Network
	if len(c.Allow) > 0 {
		network += " (" + strings.Join(c.Allow, ", ") + ")"
	}
	if c.SetupNetwork != "" {
		network += "; the setup command had " + c.SetupNetwork + ", taken away after it"
	}
	line("network", network)
	if c.Isolation == config.IsolationGVisor {
		line("isolation", "gvisor (its own kernel in user space, not the host's)")
	}
	if c.Limits.CPUs != "" {
		line("limits", limits(c.Limits))
	}
	if c.Storage != "" {
		line("storage", c.Storage)
	}
	for _, l := range c.Weakened {
		line("weakened", l)
	}
	for _, n := range c.Notes {
		line("ignored", n)
	}
	if c.Pool != "" {
		line("pool", "made ahead ("+c.Pool+")")
	}
	if c.ForkedFrom != "" {
		line("forked", fmt.Sprintf("from '%s' (its files and image %s; no setup)", c.ForkedFrom, c.Image))
	}
	if b := c.Build; b != nil {
		how := "built"
		if b.Cached {
			how = "unchanged, not rebuilt"
		}
		line("image", fmt.Sprintf("%s (%s from %s)", c.Image, how, b.Dockerfile))
	}
	setup(c, line)
	for _, s := range []string{c.Setup.Stdout, c.Setup.Stderr} {
		if s != "" {
			fmt.Fprint(w, indent(s, "    "))
		}
	}
	for _, p := range c.Ports {
		line("port", fmt.Sprintf("%s %s -> %d (%s)", p.Name, p.Reach(), p.ContainerPort, strings.Join(p.Env, ", ")))
	}
	for _, s := range c.Services {
		line("service", s.String())
	}
}

// limits says a sandbox's bounds, and where it stands in the budgets.
func limits(l create.Limits) string {
	s := fmt.Sprintf("%s CPUs, %s memory, %d processes", l.CPUs, l.Memory, l.Pids)
	if l.Idle != "" {
		s += ", stops after " + l.Idle + " idle"
	}
	var of []string
	if l.MemoryBudget > 0 {
		of = append(of, fmt.Sprintf("this repository's running sandboxes' memory %s of a %s budget", result.HumanSize(l.MemoryInUse), result.HumanSize(l.MemoryBudget)))
	}
	if l.MaxSandboxes > 0 {
		of = append(of, fmt.Sprintf("sandbox %d of %d here", l.Sandboxes, l.MaxSandboxes))
	}
	if len(of) > 0 {
		s += " (" + strings.Join(of, "; ") + ")"
	}
	return s
}

// setup says, for a person, whether the setup command ran, or where its
// result came from.
func setup(c *create.Created, line func(label, value string)) {
	switch sc := c.SetupCache; {
	case c.ForkedFrom != "":
	case sc != nil && sc.Hit:
		line("setup", fmt.Sprintf("%s (from the setup cache %s: %d files, %s, made by '%s'; not run)", c.Setup.Command, sc.Key, sc.Files, result.HumanSize(sc.Bytes), sc.From))
	default:
		line("setup", fmt.Sprintf("%s (exit %d%s)", c.Setup.Command, c.Setup.ExitCode, defaultSetup(c)))
		switch {
		case sc != nil && sc.Saved:
			line("cache", fmt.Sprintf("kept as %s (%d files, %s): the next create with this key skips the setup", sc.Key, sc.Files, result.HumanSize(sc.Bytes)))
		case sc != nil && sc.NotKept != "":
			line("cache", "not kept: "+sc.NotKept)
		}
	}
}

// CreatedForAgent is a new sandbox for an agent: whether it is ready, then
// plain "label: value" lines, the setup command's output in blocks, and its
// notes and warnings, since an agent sees nothing else.
func CreatedForAgent(c *create.Created) string {
	var b strings.Builder
	if c.Status == create.StatusFailedSetup {
		fmt.Fprintf(&b, "Sandbox '%s' was created and is usable, but its setup command failed: %s Do not create it again: work in it as it is (bash can run the steps you need), and tell the person what failed.\n", c.Name, SetupFailure(c))
	} else {
		fmt.Fprintf(&b, "Sandbox '%s' is ready.\n", c.Name)
	}
	line := func(label, value string) { fmt.Fprintf(&b, "%s: %s\n", label, value) }
	where(c, line)
	line("config", configFiles(c, "defaults (no config file)"))
	if c.Build == nil && c.ForkedFrom == "" {
		line("image", imageOrigin(c))
	}
	line("network", c.Network)
	if c.Isolation == config.IsolationGVisor {
		line("isolation", "gvisor")
	}
	if c.Limits.CPUs != "" {
		line("limits", limits(c.Limits))
	}
	switch {
	case c.ForkedFrom != "":
		line("forked from", c.ForkedFrom+" (its files, ignored ones included; no setup ran)")
	case c.SetupCache != nil && c.SetupCache.Hit:
		line("setup", c.Setup.Command+" (its result came from the setup cache; it did not run)")
	default:
		line("setup", fmt.Sprintf("%s (exit %d%s)", c.Setup.Command, c.Setup.ExitCode, defaultSetup(c)))
		if sc := c.SetupCache; sc != nil && sc.NotKept != "" {
			line("setup cache", "not kept: "+sc.NotKept)
		}
	}
	for _, out := range []struct{ name, text string }{{"stdout", c.Setup.Stdout}, {"stderr", c.Setup.Stderr}} {
		if out.text != "" {
			fmt.Fprintf(&b, "setup %s:\n%s\n", out.name, strings.TrimSuffix(out.text, "\n"))
		}
	}
	for _, p := range c.Ports {
		line("port "+p.Name, fmt.Sprintf("container port %d -> %s (%s)", p.ContainerPort, p.Reach(), strings.Join(p.Env, ", ")))
	}
	for _, s := range c.Services {
		fmt.Fprintf(&b, "service %s\n", s)
	}
	for _, n := range c.Notes {
		line("not honoured", n)
	}
	for _, w := range c.Warnings {
		line("warning", w)
	}
	return b.String()
}

// where is what both readers are told first: the branch, the container,
// the base commit and the working directory.
func where(c *create.Created, line func(label, value string)) {
	line("branch", c.Branch)
	line("container", c.Container)
	line("base", c.Base)
	line("workdir", c.Workdir)
}

// imageOrigin is the image and the file that chose it; on the default
// image, the one the project's files ask for, with its line of config.
func imageOrigin(c *create.Created) string {
	switch {
	case c.ImageFrom != "":
		return fmt.Sprintf("%s (from %s)", c.Image, c.ImageFrom)
	case c.ImageHint != "":
		return fmt.Sprintf("%s (the default; %s)", c.Image, c.ImageHint)
	}
	return fmt.Sprintf("%s (the default; set image under [docker] in %s for your project's tools)", c.Image, config.File)
}

// defaultSetup marks the default setup command as such, so its output is
// not taken for the project's.
func defaultSetup(c *create.Created) string {
	if c.SetupFrom != "" || c.Setup.Command != config.DefaultSetup {
		return ""
	}
	return "; the default, not your project's: set setup-command under [docker] in " + config.File
}

// configFiles names the config files the sandbox was made from, or none.
func configFiles(c *create.Created, none string) string {
	if len(c.ConfigFiles) == 0 {
		return none
	}
	return strings.Join(c.ConfigFiles, ", ")
}

// indent puts prefix before each line of s, ending the last one.
func indent(s, prefix string) string {
	out := ""
	line := ""
	for _, r := range s {
		line += string(r)
		if r == '\n' {
			out += prefix + line
			line = ""
		}
	}
	if line != "" {
		out += prefix + line + "\n"
	}
	return out
}

// SetupFailure explains a failed setup command: which file it came from,
// what network it had, and how a person turns it off, so that nobody
// takes it for a failed create.
func SetupFailure(c *create.Created) string {
	from := "the default setup command"
	if c.SetupFrom != "" {
		from = "the setup command from " + c.SetupFrom
	}
	net := c.SetupNetwork
	switch {
	case net != "":
	case c.Network == "none":
		net = "no network"
	case c.Network == "allow":
		net = "only the allowlist (" + strings.Join(c.Allow, ", ") + ")"
	default:
		net = "the network " + c.Network
	}
	way := ""
	if c.SetupNetwork == "" && (c.Network == "none" || c.Network == "allow") {
		way = `, or give the setup a network with [network] setup = "open"`
	}
	return fmt.Sprintf("%s (%s) exited with code %d; it had %s. The sandbox is kept, marked failed-setup. A person can turn the setup off with setup-command = \"\" under [docker] in %s%s.",
		from, agenttext.Shown(c.Setup.Command), c.Setup.ExitCode, net, config.LocalFile, way)
}
