// Package config reads a repository's Litterbox configuration
// (.litterbox.toml, overridden key by key by .litterbox.local.toml) into one
// validated Config; every error names the file, line and key.
package config

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/devcontainer"
)

// Config is how sandboxes of one repository are made.
type Config struct {
	// ProjectSlug overrides the repo slug derived from the root's basename.
	ProjectSlug string
	// Image is the image sandboxes run; with Build set, the tag the build
	// gets once it is known.
	Image string
	// Build, when set, makes the image from a Dockerfile of the project.
	Build        *BuildSpec
	SetupCommand string
	// SetupInputs are the files whose content, with the image and the
	// setup command, keys the setup cache; none: the whole base tree.
	SetupInputs []string
	// SetupCache: a setup's result is kept and reused (default true).
	SetupCache bool
	// SetupKeep are paths outside /src and the home that live on volumes
	// of the sandbox, as the home does: written on a read-only root, kept
	// through pause, copied by fork and kept by the setup cache.
	SetupKeep []string
	// User is "uid:gid", numeric: the tree copied into /src is given to it.
	User string
	// Network is "none", "bridge" or the name of a docker network.
	Network string
	// Allow, with network mode "allow", lists the hosts the sandbox
	// reaches through its egress proxy (its own Network is then "none");
	// EgressNetwork is the docker network the proxy reaches out on.
	Allow         []string
	EgressNetwork string
	// SetupOpen gives the setup command the egress network, taken away
	// before the first agent call; SetupAllow instead gives it an
	// allowlist of its own, through the egress proxy.
	SetupOpen  bool
	SetupAllow []string
	// Secrets are the [secrets] table: where each value is read on the
	// host. Values never enter a Config.
	Secrets   map[string]SecretSpec
	ReadOnly  bool
	Memory    string
	CPUs      string
	PidsLimit int
	Env       map[string]string
	Ports     []PortSpec
	Services  map[string]ServiceSpec
	// MaxFileSize and MaxCallSize bound what one agent call's snapshot
	// stores in the host repository: a file over MaxFileSize is never
	// committed, and past MaxCallSize the rest waits for the next call.
	// A file counts its size (at least 4 KiB) and 4 KiB for each directory
	// above it the call writes a new tree for; the rules mirror under the
	// git dir is bounded by MaxCallSize per call the same way.
	MaxFileSize int64
	MaxCallSize int64
	// Disk is the size /src may reach before writes are refused: a guard
	// Litterbox keeps, not a quota the engine enforces.
	Disk int64
	// MaxSandboxes bounds the live sandboxes of this repository an agent
	// may create (a person may pass it); MemoryBudget bounds the memory
	// limits of this repository's running sandboxes together, as a share
	// of its host's memory ("50%") or a size; Idle, when set, stops a
	// sandbox that had no call and used no CPU for that long.
	MaxSandboxes int
	MemoryBudget string
	Idle         time.Duration
	// PoolSize is how many sandboxes of this config [pool] keeps made,
	// started and empty, for a create to claim instead of making one.
	PoolSize int
	// Isolation is what separates a sandbox from the host's kernel:
	// IsolationContainer (the engine's runc) or IsolationGVisor, gVisor's
	// kernel in user space, run as the engine runtime GVisorRuntime
	// (Podman given GVisorFlags as --runtime-flag) or as the Kubernetes
	// RuntimeClass.
	Isolation     string
	GVisorRuntime string
	GVisorFlags   []string
	RuntimeClass  string
	// OutputLimit is how many bytes of each output stream of a command an
	// agent's result keeps: the first half and the last, the middle elided
	// (the whole stream is saved in the sandbox).
	OutputLimit int64
	// AgentCommand is what `litterbox run NAME` runs when no command is
	// given: the project's agent, as an argv.
	AgentCommand []string
	// ReviewCheck is the shell command `litterbox merge A B C` runs in each
	// sandbox after its sync, taking it only when it exits 0 ("" runs
	// none). It runs inside the sandbox, as an agent's bash does.
	ReviewCheck string
	// Files are the config files this was read from, relative to the root
	// (the user's own config by its absolute path).
	Files []string
	// mode is [network] mode as the last file that set it wrote it.
	mode string
	// devcontainer is the devcontainer.json read, if any.
	devcontainer *devcontainer.File
	// Notes name what a config file asks for that Litterbox does not do.
	Notes []string
	// From names, for each setting that can loosen a sandbox (see
	// Weakenings), the file that set it last: "docker.network",
	// "docker.user", "docker.read-only", "docker.memory", "docker.cpus",
	// "docker.pids", "docker.disk", "snapshot.max-file-size",
	// "snapshot.max-call-size", "network.setup", "ports.<name>" and
	// "secrets.<NAME>".
	From map[string]string
}

// BuildSpec is [docker] build: a Dockerfile and its context, relative to
// the repository root, with a target stage and build arguments.
type BuildSpec struct {
	Dockerfile string            `json:"dockerfile"`
	Context    string            `json:"context"`
	Target     string            `json:"target,omitempty"`
	Args       map[string]string `json:"args,omitempty"`
}

// SecretSpec says where a secret's value comes from: Env, the name of a
// variable in Litterbox's environment, or Command, a program (split like a
// shell line, never run by one) whose output is the value.
type SecretSpec struct {
	Env     string `json:"env,omitempty"`
	Command string `json:"command,omitempty"`
	// Inject names the hosts that receive the value; the sandbox holds a
	// placeholder instead, which the egress proxy replaces in requests to
	// them.
	Inject []string `json:"inject,omitempty"`
	// Header is the one request header the value goes in
	// ("Authorization" when empty); a placeholder anywhere else in a
	// request stays the placeholder.
	Header string `json:"header,omitempty"`
}

func (s SecretSpec) String() string {
	src := "command = " + strconv.Quote(s.Command)
	if s.Env != "" {
		src = "env = " + strconv.Quote(s.Env)
	}
	if len(s.Inject) > 0 {
		q := make([]string, len(s.Inject))
		for i, h := range s.Inject {
			q[i] = strconv.Quote(h)
		}
		src += ", inject = [" + strings.Join(q, ", ") + "]"
	}
	if s.Header != "" {
		src += ", header = " + strconv.Quote(s.Header)
	}
	return "{ " + src + " }"
}

// Injected are the secrets of c that the egress proxy gives its hosts.
func (c Config) Injected() map[string]SecretSpec {
	var out map[string]SecretSpec
	for name, s := range c.Secrets {
		if len(s.Inject) > 0 {
			if out == nil {
				out = map[string]SecretSpec{}
			}
			out[name] = s
		}
	}
	return out
}

// PortSpec is one [[ports]] entry: a container port published on a host port
// chosen at create time.
type PortSpec struct {
	Name   string `json:"name"`
	Target int    `json:"target"`
}

// EnvSuffix is the port's name as it appears in its environment variables.
func (p PortSpec) EnvSuffix() string { return EnvName(p.Name) }

// ServiceSpec is one [container.services.NAME] entry.
type ServiceSpec struct {
	Command []string `json:"command"`
	// Stop is the signal that asks the service to end (default TERM); after
	// StopTimeout seconds the whole process group gets KILL.
	Stop        string `json:"stop"`
	StopTimeout int    `json:"stop_timeout"`
	// Restart, when set, is sent instead of a stop and start (e.g. HUP).
	Restart string `json:"restart,omitempty"`
	// Background: an agent started it with bash's background, not the
	// config.
	Background bool `json:"background,omitempty"`
}

// Isolation levels.
const (
	IsolationContainer = "container"
	IsolationGVisor    = "gvisor"
)

// Defaults of settings a config file may leave out.
const (
	DefaultMaxSandboxes = 8
	// MaxPoolSize bounds [pool] size: each entry holds its memory.
	MaxPoolSize          = 32
	DefaultMemoryBudget  = "75%"
	DefaultGVisorRuntime = "runsc"
	DefaultRuntimeClass  = "gvisor"
	defaultImage         = "busybox:latest"
	DefaultSetup         = "echo hello world"
	defaultUser          = "1000:1000"
	defaultNetwork       = "none"
	defaultMemory        = "2g"
	defaultPids          = 512
	DefaultStopSignal    = "TERM"
	defaultStopTimeout   = 10
	defaultMaxFileSize   = 50 << 20
	defaultMaxCallSize   = 500 << 20
	defaultDisk          = 10 << 30
	defaultOutputLimit   = 32 << 10
)

// Bounds on an output limit, in the config or a call's: below MinOutputLimit
// a result shows too little to act on; past MaxOutputLimit more than an
// agent's context should take from one command.
const (
	MinOutputLimit = 1 << 10
	MaxOutputLimit = 1 << 20
)

// ImageIsDefault reports whether sandboxes run the default image: no
// file chose an image or a build.
func (c Config) ImageIsDefault() bool {
	return c.From["docker.image"] == "" && c.Build == nil && c.Image == defaultImage
}

// Default is what a repository without configuration gets.
func Default() Config {
	// Two CPUs, leaving the host at least half of one: 1.5 on two cores.
	cpus := min(2, max(0.5, float64(runtime.NumCPU())-0.5))
	return Config{
		Image:         defaultImage,
		SetupCommand:  DefaultSetup,
		User:          defaultUser,
		Network:       defaultNetwork,
		ReadOnly:      true,
		Memory:        defaultMemory,
		CPUs:          strconv.FormatFloat(cpus, 'f', -1, 64),
		PidsLimit:     defaultPids,
		SetupCache:    true,
		MaxFileSize:   defaultMaxFileSize,
		MaxCallSize:   defaultMaxCallSize,
		Disk:          defaultDisk,
		OutputLimit:   defaultOutputLimit,
		MaxSandboxes:  DefaultMaxSandboxes,
		MemoryBudget:  defaultBudget(),
		Isolation:     IsolationContainer,
		GVisorRuntime: DefaultGVisorRuntime,
		RuntimeClass:  DefaultRuntimeClass,
	}
}

// BudgetEnv, when it holds a valid budget, replaces DefaultMemoryBudget:
// for a machine that runs more sandboxes at once than the default allows
// on purpose (a CI host running test suites side by side).
const BudgetEnv = "LITTERBOX_MEMORY_BUDGET"

func defaultBudget() string {
	if b := os.Getenv(BudgetEnv); b != "" {
		if _, _, err := ParseBudget(b); err == nil {
			return b
		}
	}
	return DefaultMemoryBudget
}

// IDs parses User into numeric ids.
func (c Config) IDs() (uid, gid int, err error) {
	u, g, ok := strings.Cut(c.User, ":")
	if !ok {
		g = u
	}
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("sandbox user %q must be numeric uid:gid", c.User)
	}
	return uid, gid, nil
}

// DefaultEgressNetwork is the network the proxy reaches out on by default.
const DefaultEgressNetwork = "bridge"

// SetupOpensNetwork: the setup command runs on the egress network, which
// create takes away before anything else runs.
func (c Config) SetupOpensNetwork() bool { return c.SetupOpen && c.Network == "none" }

// OutboundNetwork is where the proxy, or a setup command with the network,
// reaches out.
func (c Config) OutboundNetwork() string {
	if c.EgressNetwork != "" {
		return c.EgressNetwork
	}
	return DefaultEgressNetwork
}
