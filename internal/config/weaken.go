package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Weakening is a setting that loosens what a sandbox may do, beyond the
// defaults, and the file that set it.
type Weakening struct {
	Key   string // dotted key: docker.network, ports.<name>, ...
	Value string // as it would be written in the file
	File  string // as in Config.From; "" when no file set it
}

func (w Weakening) String() string {
	return fmt.Sprintf("%s = %s", w.Key, w.Value)
}

// Weakenings lists the settings of c that loosen a sandbox's defaults: any
// network but "none", uid 0, a writable root file system, limits above the
// defaults, and published ports.
func (c Config) Weakenings() []Weakening {
	d := Default()
	var out []Weakening
	add := func(key, value string) { out = append(out, Weakening{Key: key, Value: value, File: c.From[key]}) }
	if c.Network != d.Network {
		add("docker.network", strconv.Quote(c.Network))
	}
	// A build runs the project's Dockerfile on this machine's engine, as
	// root and before any sandbox bound applies (with the setup command's
	// network, if it has one).
	if c.Build != nil {
		add("docker.build", strconv.Quote(c.Build.Dockerfile))
	}
	if uid, _, err := c.IDs(); err == nil && uid == 0 {
		add("docker.user", strconv.Quote(c.User))
	}
	if !c.ReadOnly {
		add("docker.read-only", "false")
	}
	if memBytes(c.Memory) > memBytes(d.Memory) {
		add("docker.memory", strconv.Quote(c.Memory))
	}
	cpus, _ := strconv.ParseFloat(c.CPUs, 64)
	if defCPUs, _ := strconv.ParseFloat(d.CPUs, 64); cpus > defCPUs {
		add("docker.cpus", c.CPUs)
	}
	// Which runtime is gVisor is this machine's to say: a repository
	// naming another could have runc pass for it.
	if c.GVisorRuntime != d.GVisorRuntime {
		add("docker.gvisor-runtime", strconv.Quote(c.GVisorRuntime))
	}
	if c.GVisorFlags != nil {
		add("docker.gvisor-flags", tomlList(c.GVisorFlags))
	}
	if c.RuntimeClass != d.RuntimeClass {
		add("kubernetes.runtime-class", strconv.Quote(c.RuntimeClass))
	}
	if c.MaxSandboxes > d.MaxSandboxes {
		add("limits.sandboxes", strconv.Itoa(c.MaxSandboxes))
	}
	if pct, _, err := ParseBudget(c.MemoryBudget); err == nil && (pct == 0 || pct > 75) {
		add("limits.memory-budget", strconv.Quote(c.MemoryBudget))
	}
	if c.PidsLimit > d.PidsLimit {
		add("docker.pids", strconv.Itoa(c.PidsLimit))
	}
	if c.Disk > d.Disk {
		add("docker.disk", strconv.Quote(FormatSize(c.Disk)))
	}
	if c.MaxFileSize > d.MaxFileSize {
		add("snapshot.max-file-size", strconv.Quote(FormatSize(c.MaxFileSize)))
	}
	if c.MaxCallSize > d.MaxCallSize {
		add("snapshot.max-call-size", strconv.Quote(FormatSize(c.MaxCallSize)))
	}
	if c.Allow != nil {
		add("network.allow", tomlList(c.Allow))
	}
	if (c.Allow != nil || c.SetupOpen || c.SetupAllow != nil) && c.EgressNetwork != "" && c.EgressNetwork != "bridge" {
		add("network.egress", strconv.Quote(c.EgressNetwork))
	}
	switch {
	case c.SetupOpen:
		add("network.setup", `"open"`)
	case c.SetupAllow != nil:
		add("network.setup", tomlList(c.SetupAllow))
	}
	// A secret hands a value of this machine to the sandbox, and a command
	// secret runs a program here: a repository may not ask for either.
	for _, name := range slices.Sorted(maps.Keys(c.Secrets)) {
		add("secrets."+name, c.Secrets[name].String())
	}
	for _, p := range c.Ports {
		add("ports."+p.Name, strconv.Itoa(p.Target))
	}
	return out
}

func tomlList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
