package box

import (
	"io"
	"strings"
	"time"
)

// Spec is everything a provider needs to make a sandbox's box: a
// container, or a pod.
type Spec struct {
	Name     string
	Hostname string
	Image    string
	Labels   map[string]string
	// User the container's processes run as ("uid:gid").
	User     string
	ReadOnly bool
	// Tmpfs mounts, path -> options.
	Tmpfs map[string]string
	// Volumes are the box's own named volumes (/src, the home): the engine
	// makes each on first use, labelled with VolumeLabels, and they outlive
	// the container until removed by name.
	Volumes      []Mount
	VolumeLabels map[string]string
	// AnonVolumes are paths that get a volume of their own, removed with
	// the container (rm -v).
	AnonVolumes []string
	// Shared are existing named volumes mounted besides Volumes.
	Shared []Mount
	// VolumesFrom mounts every volume of these containers where they
	// have them ("NAME" or "NAME:ro").
	VolumesFrom []string
	// LogMax, when set, bounds the container's log: json-file, in two
	// files of at most this size.
	LogMax      string
	Workdir     string
	Env         map[string]string
	CapDrop     []string
	CapAdd      []string
	SecurityOpt []string
	PidsLimit   int
	// Ulimits, name -> "soft:hard".
	Ulimits map[string]string
	Memory  string
	CPUs    string
	Network string
	// Allow, on a runtime with no egress proxy (Kubernetes), is network
	// "none" opened to these allowlist entries; docker sandboxes reach
	// them through the proxy and leave it empty.
	Allow []string
	// Publish maps host ports to container ports.
	Publish    []PortBinding
	Entrypoint string
	Cmd        []string
	// OpenStdin keeps the container's stdin open for `start --interactive`.
	OpenStdin bool
	// Isolation, when set, runs the box under gVisor instead of the
	// engine's default runtime.
	Isolation *Isolation
}

// Isolation names gVisor to each kind of provider: an engine's runtime
// (docker and podman --runtime), the flags Podman passes it on every start
// (--runtime-flag; Docker keeps them with the runtime, in daemon.json), a
// cluster's RuntimeClass.
type Isolation struct {
	Runtime      string
	Flags        []string
	RuntimeClass string
	// HostSockets: the box connects to a unix socket another box made on
	// a shared volume (the egress proxy's), which runsc allows only with
	// --host-uds=open.
	HostSockets bool
	// Network: the box needs a network beyond its loopback (a network
	// other than "none", published ports), which runsc --network=none
	// takes away.
	Network bool
}

// NoNetwork reports whether runsc flags turn gVisor's network off.
func NoNetwork(flags []string) bool {
	for i, f := range flags {
		f = strings.TrimLeft(f, "-")
		if f == "network=none" || f == "network" && i+1 < len(flags) && flags[i+1] == "none" {
			return true
		}
	}
	return false
}

// AllowsHostSockets reports whether runsc flags (as written in
// daemon.json or passed with --runtime-flag, dashes or not) let a box
// connect to a host's unix socket.
func AllowsHostSockets(flags []string) bool {
	for i, f := range flags {
		f = strings.TrimLeft(f, "-")
		if f == "host-uds=open" || f == "host-uds=all" || f == "host-uds" && i+1 < len(flags) && (flags[i+1] == "open" || flags[i+1] == "all") {
			return true
		}
	}
	return false
}

// Mount mounts a named volume at Target.
type Mount struct {
	Volume   string
	Target   string
	ReadOnly bool
}

// PortBinding publishes ContainerPort (tcp) on HostIP:HostPort.
type PortBinding struct {
	HostIP        string
	HostPort      int
	ContainerPort int
}

// ExecSpec describes one command run in a box (`docker exec`, `kubectl exec`).
type ExecSpec struct {
	User    string
	Workdir string
	Env     map[string]string
	// Secrets reach the command's environment as --env NAME, the value
	// taken by the docker client from its own environment, so no argv,
	// log line or docker inspect holds it.
	Secrets     map[string]string
	Interactive bool // keep stdin open (-i)
	TTY         bool // allocate a terminal (-t)
	Detach      bool // start it and return at once (-d)
	Cmd         []string
	// OwnGroup is no option of docker's: the docker client runs in a
	// process group of its own (see runner.Cmd.OwnGroup).
	OwnGroup bool
	// Shown is the equivalent exec the log shows (see runner.Shown).
	Shown *Shown
	// StdinKey is what transcripts match the exec's stdin by (see
	// runner.Cmd.StdinKey).
	StdinKey func([]byte) string
	// Carried, when set, says the exec's effect was had already over a
	// kept channel, with this outcome: the provider logs and audits it
	// (Shown) and starts nothing (see runner.Cmd.Carried).
	Carried *Carried
}

// Carried is how an exec carried over a kept channel ended.
type Carried struct {
	ExitCode int
	Took     time.Duration
}

// Shown is an exec with the same effect as an ExecSpec that speaks a
// protocol on stdin, for the log (see runner.Shown).
type Shown struct {
	Spec     ExecSpec
	Input    []byte
	HasInput bool
	Note     string
}

// Streams connects an exec to the caller's streams; nil members are captured.
type Streams struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// BuildSpec is one `docker build` of a context streamed as a tar archive
// on stdin (`docker build -`), so the engine gets exactly the files the
// caller put in it and nothing of this machine's directories.
type BuildSpec struct {
	Dockerfile string    // the Dockerfile's path inside the context archive
	Context    io.Reader // the context, a tar stream
	Tag        string
	Target     string
	Args       map[string]string
	Labels     map[string]string
	// Network is the RUN steps' network: "none" for none, "" for the
	// engine's default.
	Network string
}
