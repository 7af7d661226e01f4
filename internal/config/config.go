// Package config reads a repository's Litterbox configuration
// (.litterbox.toml, overridden key by key by .litterbox.local.toml) into one
// validated Config; every error names the file, line and key.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/google/shlex"

	"github.com/litterbox-dev/litterbox/internal/devcontainer"
	"github.com/litterbox-dev/litterbox/internal/egress"
	"github.com/litterbox-dev/litterbox/internal/slug"
)

// Config files, read from the repository root in this order; the second
// overrides the first key by key and is meant to stay out of version control.
// The user's own config (UserFile) comes before both.
const (
	File      = ".litterbox.toml"
	LocalFile = ".litterbox.local.toml"
)

// UserFile is the user's own config, for every repository:
// $XDG_CONFIG_HOME/litterbox/config.toml, else ~/.config/litterbox/config.toml;
// "" when neither can be known.
func UserFile() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(dir) { // relative: ignored, as the XDG spec says
		dir = ""
	}
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "litterbox", "config.toml")
}

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
}

func (s SecretSpec) String() string {
	if s.Env != "" {
		return "{ env = " + strconv.Quote(s.Env) + " }"
	}
	return "{ command = " + strconv.Quote(s.Command) + " }"
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

// Defaults of settings a config file may leave out.
const (
	defaultImage       = "busybox:latest"
	DefaultSetup       = "echo hello world"
	defaultUser        = "1000:1000"
	defaultNetwork     = "none"
	defaultMemory      = "2g"
	defaultPids        = 512
	DefaultStopSignal  = "TERM"
	defaultStopTimeout = 10
	defaultMaxFileSize = 50 << 20
	defaultMaxCallSize = 500 << 20
	defaultDisk        = 10 << 30
)

// Default is what a repository without configuration gets.
func Default() Config {
	cpus := 2
	if n := runtime.NumCPU(); n < cpus {
		cpus = n
	}
	return Config{
		Image:        defaultImage,
		SetupCommand: DefaultSetup,
		User:         defaultUser,
		Network:      defaultNetwork,
		ReadOnly:     true,
		Memory:       defaultMemory,
		CPUs:         strconv.Itoa(cpus),
		PidsLimit:    defaultPids,
		SetupCache:   true,
		MaxFileSize:  defaultMaxFileSize,
		MaxCallSize:  defaultMaxCallSize,
		Disk:         defaultDisk,
	}
}

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

// Error is a config file that cannot be used: where and why.
type Error struct {
	File string // as given to the reader, relative to the repository root
	Line int    // 0 when the problem is not on one line
	Key  string // dotted key, when known
	Msg  string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ", line %d", e.Line)
	}
	if e.Key != "" {
		fmt.Fprintf(&b, ", key %s", e.Key)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// fileConfig is one file as written. Pointers tell "unset" from a zero value,
// so a local file overrides only what it mentions.
type fileConfig struct {
	Project struct {
		Slug *string `toml:"slug"`
	} `toml:"project"`
	Docker struct {
		Image        *string           `toml:"image"`
		Build        *string           `toml:"build"`
		Context      *string           `toml:"context"`
		Target       *string           `toml:"target"`
		Args         map[string]string `toml:"args"`
		SetupCommand *string           `toml:"setup-command"`
		Network      *string           `toml:"network"`
		User         *userID           `toml:"user"`
		ReadOnly     *bool             `toml:"read-only"`
		Memory       *memorySize       `toml:"memory"`
		CPUs         *cpuCount         `toml:"cpus"`
		Pids         *pidsLimit        `toml:"pids"`
		Env          map[string]string `toml:"env"`
		Disk         *byteSize         `toml:"disk"`
	} `toml:"docker"`
	Setup struct {
		Inputs []string `toml:"inputs"`
		Cache  *bool    `toml:"cache"`
	} `toml:"setup"`
	Snapshot struct {
		MaxFileSize *byteSize `toml:"max-file-size"`
		MaxCallSize *byteSize `toml:"max-call-size"`
	} `toml:"snapshot"`
	Network struct {
		Mode   *string   `toml:"mode"`
		Allow  []string  `toml:"allow"`
		Egress *string   `toml:"egress"`
		Setup  *setupNet `toml:"setup"`
	} `toml:"network"`
	Secrets   map[string]fileSecret `toml:"secrets"`
	Ports     []filePort            `toml:"ports"`
	Container struct {
		Services map[string]fileService `toml:"services"`
	} `toml:"container"`
}

type fileSecret struct {
	Env     *string `toml:"env"`
	Command *string `toml:"command"`
}

type filePort struct {
	Name   *string     `toml:"name"`
	Target *portNumber `toml:"target"`
}

type fileService struct {
	Command     *command           `toml:"command"`
	Signals     map[string]*signal `toml:"signals"`
	StopTimeout *int               `toml:"stop-timeout"`
}

// Load reads the config files of the repository at root over the
// defaults. A missing file is fine; anything else wrong with one is a
// *Error naming the file, and the line and key where the parser knows
// them.
func Load(root string) (Config, error) {
	cfg := Default()
	var files []*fileConfig
	var names []string
	for _, name := range []string{UserFile(), devcontainerName, File, LocalFile} {
		if name == "" {
			continue
		}
		if name == devcontainerName {
			fc, f, err := devcontainerFile(root)
			if err != nil {
				return cfg, err
			}
			if f != nil {
				cfg.devcontainer = f
				for _, n := range f.Ignored {
					cfg.Notes = append(cfg.Notes, f.Name+": "+n)
				}
				files = append(files, fc)
				names = append(names, f.Name)
				cfg.Files = append(cfg.Files, f.Name)
			}
			continue
		}
		path := name
		if !filepath.IsAbs(name) {
			path = filepath.Join(root, name)
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return cfg, &Error{File: name, Msg: err.Error()}
		}
		fc, err := parseConfig(name, data)
		if err != nil {
			return cfg, err
		}
		files = append(files, fc)
		names = append(names, name)
		cfg.Files = append(cfg.Files, name)
	}
	networkSet := false
	for i, fc := range files {
		networkSet = fc.apply(&cfg, names[i]) || networkSet
	}
	// Published ports need a network: a file that asks for ports and says
	// nothing about the network (as every Rust-era config did) gets bridge.
	if len(cfg.Ports) > 0 && !networkSet {
		cfg.Network = "bridge"
		cfg.From["docker.network"] = cfg.From["ports."+cfg.Ports[0].Name]
	}
	return cfg, cfg.validate()
}

// devcontainerName stands for the devcontainer.json, wherever it is, in
// Load's order of files.
const devcontainerName = "\x00devcontainer"

// parseConfig decodes one file.
func parseConfig(name string, data []byte) (*fileConfig, error) {
	var fc fileConfig
	md, err := toml.Decode(string(data), &fc)
	if err != nil {
		return nil, tomlError(name, err)
	}
	if err := unknownKey(name, data, md); err != nil {
		return nil, err
	}
	if fc.Docker.Image != nil && fc.Docker.Build != nil {
		return nil, &Error{File: name, Key: "docker.build", Msg: "set image or build, not both"}
	}
	if fc.Docker.Build == nil {
		for key, v := range map[string]bool{"context": fc.Docker.Context != nil, "target": fc.Docker.Target != nil, "args": fc.Docker.Args != nil} {
			if v {
				return nil, &Error{File: name, Key: "docker." + key, Msg: "only with build = \"path/to/Dockerfile\""}
			}
		}
	}
	for _, p := range append([]string{deref(fc.Docker.Build), deref(fc.Docker.Context)}, fc.Setup.Inputs...) {
		if p != "" && !filepath.IsLocal(filepath.FromSlash(p)) && p != "." {
			return nil, &Error{File: name, Msg: fmt.Sprintf("path %q: want a path inside the repository, relative to its root", p)}
		}
	}
	if fc.Docker.Network != nil && fc.Network.Mode != nil {
		return nil, &Error{File: name, Key: "docker.network", Msg: "set [network] mode or the older [docker] network, not both"}
	}
	for i, p := range fc.Ports {
		key := fmt.Sprintf("ports[%d]", i+1)
		if p.Name == nil || *p.Name == "" {
			return nil, &Error{File: name, Key: key + ".name", Msg: "every [[ports]] entry needs a name"}
		}
		if p.Target == nil {
			return nil, &Error{File: name, Key: key + ".target", Msg: fmt.Sprintf("port %q needs a target (the container port)", *p.Name)}
		}
		if EnvName(*p.Name) == "" {
			return nil, &Error{File: name, Key: key + ".name", Msg: fmt.Sprintf("port name %q has no letter or digit to name its environment variable", *p.Name)}
		}
	}
	for sn, s := range fc.Container.Services {
		key := "container.services." + sn
		if !validServiceName(sn) {
			return nil, &Error{File: name, Key: key, Msg: fmt.Sprintf("service name %q: use letters, digits, '.', '_' and '-'", sn)}
		}
		for k := range s.Signals {
			if k != "stop" && k != "restart" {
				return nil, &Error{File: name, Key: key + ".signals." + k, Msg: "signals are \"stop\" and \"restart\""}
			}
		}
		if s.StopTimeout != nil && (*s.StopTimeout < 0 || *s.StopTimeout > 3600) {
			return nil, &Error{File: name, Key: key + ".stop-timeout", Msg: fmt.Sprintf("%d: want seconds from 0 to 3600", *s.StopTimeout)}
		}
	}
	return &fc, nil
}

var tomlLine = regexp.MustCompile(`^toml: line (\d+)(?: \(last key "([^"]*)"\))?: (.*)$`)

// tomlError turns the parser's error into a Error; the parser puts the
// line and key in its message, also for type errors it does not type.
func tomlError(name string, err error) error {
	m := tomlLine.FindStringSubmatch(err.Error())
	if m == nil {
		return &Error{File: name, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	line, _ := strconv.Atoi(m[1])
	return &Error{File: name, Line: line, Key: m[2], Msg: plainTypeError(m[3])}
}

var typeMismatch = regexp.MustCompile(`^incompatible types: TOML value has type (\S+); destination has type (\S+)$`)

func plainTypeError(msg string) string {
	m := typeMismatch.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	return "want " + typeWord(m[2]) + ", got " + typeWord(m[1])
}

func typeWord(t string) string {
	switch {
	case strings.HasPrefix(t, "int"), t == "integer":
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "string":
		return "a string"
	case t == "bool", t == "boolean":
		return "true or false"
	case strings.HasPrefix(t, "map"):
		return "a table"
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "slice"):
		return "an array"
	}
	return t
}

// apply overlays what the file sets onto cfg, and reports whether it set the
// network.
func (fc *fileConfig) apply(cfg *Config, name string) (networkSet bool) {
	set(&cfg.ProjectSlug, fc.Project.Slug)
	d := fc.Docker
	from := func(key string, isSet bool) {
		if !isSet {
			return
		}
		if cfg.From == nil {
			cfg.From = map[string]string{}
		}
		cfg.From[key] = name
	}
	from("docker.network", d.Network != nil || fc.Network.Mode != nil)
	from("network.allow", fc.Network.Allow != nil)
	from("network.egress", fc.Network.Egress != nil)
	from("network.setup", fc.Network.Setup != nil)
	for name := range fc.Secrets {
		from("secrets."+name, true)
	}
	from("docker.build", d.Build != nil)
	from("docker.setup-command", d.SetupCommand != nil)
	for k := range d.Env {
		from("docker.env."+k, true)
	}
	from("docker.user", d.User != nil)
	from("docker.read-only", d.ReadOnly != nil)
	from("docker.memory", d.Memory != nil)
	from("docker.cpus", d.CPUs != nil)
	from("docker.pids", d.Pids != nil)
	from("docker.disk", d.Disk != nil)
	from("snapshot.max-file-size", fc.Snapshot.MaxFileSize != nil)
	from("snapshot.max-call-size", fc.Snapshot.MaxCallSize != nil)
	for _, p := range fc.Ports {
		from("ports."+*p.Name, true)
	}
	if d.Image != nil {
		cfg.Image, cfg.Build = *d.Image, nil
	}
	if d.Build != nil {
		cfg.Build = &BuildSpec{Dockerfile: path.Clean(*d.Build), Context: ".", Args: d.Args}
		set(&cfg.Build.Context, d.Context)
		cfg.Build.Context = path.Clean(cfg.Build.Context)
		set(&cfg.Build.Target, d.Target)
	}
	if fc.Setup.Inputs != nil {
		cfg.SetupInputs = slices.Clone(fc.Setup.Inputs)
	}
	set(&cfg.SetupCache, fc.Setup.Cache)
	set(&cfg.SetupCommand, d.SetupCommand)
	set(&cfg.Network, d.Network)
	if d.Network != nil {
		// The older key says what the network is: no allowlist from an
		// earlier file survives it.
		cfg.mode, cfg.Allow = "", nil
	}
	if m := fc.Network.Mode; m != nil {
		cfg.mode = *m
		switch *m {
		case "none":
			cfg.Network, cfg.Allow = "none", nil
		case "open":
			cfg.Network, cfg.Allow = "bridge", nil
		case "allow":
			cfg.Network = "none"
		}
	}
	if fc.Network.Allow != nil {
		cfg.Allow = slices.Clone(fc.Network.Allow)
	}
	set(&cfg.EgressNetwork, fc.Network.Egress)
	if su := fc.Network.Setup; su != nil {
		cfg.SetupOpen, cfg.SetupAllow = su.open, slices.Clone(su.allow)
	}
	for name, sec := range fc.Secrets {
		if cfg.Secrets == nil {
			cfg.Secrets = map[string]SecretSpec{}
		}
		var spec SecretSpec
		set(&spec.Env, sec.Env)
		set(&spec.Command, sec.Command)
		cfg.Secrets[name] = spec
	}
	set(&cfg.ReadOnly, d.ReadOnly)
	if d.User != nil {
		cfg.User = string(*d.User)
	}
	if d.Memory != nil {
		cfg.Memory = string(*d.Memory)
	}
	if d.CPUs != nil {
		cfg.CPUs = string(*d.CPUs)
	}
	if d.Pids != nil {
		cfg.PidsLimit = int(*d.Pids)
	}
	setSize(&cfg.Disk, d.Disk)
	setSize(&cfg.MaxFileSize, fc.Snapshot.MaxFileSize)
	setSize(&cfg.MaxCallSize, fc.Snapshot.MaxCallSize)
	if len(d.Env) > 0 {
		if cfg.Env == nil {
			cfg.Env = map[string]string{}
		}
		maps.Copy(cfg.Env, d.Env)
	}
	// Ports and services merge by name: a local file can retarget or add
	// one without repeating the rest.
	for _, p := range fc.Ports {
		spec := PortSpec{Name: *p.Name, Target: int(*p.Target)}
		if i := slices.IndexFunc(cfg.Ports, func(q PortSpec) bool { return q.Name == spec.Name }); i >= 0 {
			cfg.Ports[i] = spec
		} else {
			cfg.Ports = append(cfg.Ports, spec)
		}
	}
	for name, s := range fc.Container.Services {
		if cfg.Services == nil {
			cfg.Services = map[string]ServiceSpec{}
		}
		cur, ok := cfg.Services[name]
		if !ok {
			cur = ServiceSpec{Stop: DefaultStopSignal, StopTimeout: defaultStopTimeout}
		}
		if s.Command != nil {
			cur.Command = []string(*s.Command)
		}
		if sig := s.Signals["stop"]; sig != nil {
			cur.Stop = string(*sig)
		}
		if sig := s.Signals["restart"]; sig != nil {
			cur.Restart = string(*sig)
		}
		if s.StopTimeout != nil {
			cur.StopTimeout = *s.StopTimeout
		}
		cfg.Services[name] = cur
	}
	return d.Network != nil || fc.Network.Mode != nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func setSize(dst *int64, v *byteSize) {
	if v != nil {
		*dst = int64(*v)
	}
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// validate checks what only the merged result can tell.
func (c Config) validate() error {
	file := strings.Join(c.Files, " + ")
	if c.ProjectSlug != "" && !slug.Valid(c.ProjectSlug) {
		return &Error{File: file, Key: "project.slug", Msg: fmt.Sprintf("%q: use lowercase letters, digits and '-' (1-63 characters)", c.ProjectSlug)}
	}
	if strings.TrimSpace(c.Image) == "" {
		return &Error{File: file, Key: "docker.image", Msg: "the image must not be empty"}
	}
	if c.Network == "" {
		return &Error{File: file, Key: "docker.network", Msg: `the network must not be empty: use "none", "bridge" or a network name`}
	}
	// Not container:X, ns:PATH, slirp4netns:..., pasta:...: each reaches
	// the host's network by another name.
	if !networkNameRE.MatchString(c.Network) {
		return &Error{File: file, Key: "docker.network", Msg: fmt.Sprintf(`%q: use "none", "bridge" or the name of a docker network`, c.Network)}
	}
	if err := c.validateAllow(file); err != nil {
		return err
	}
	if err := c.validateSetup(file); err != nil {
		return err
	}
	if len(c.Ports) > 0 && c.Network == "none" {
		return &Error{File: file, Key: "docker.network", Msg: fmt.Sprintf(`port %q needs a network, but network is "none": set network = "bridge" (or a network name) under [docker]`, c.Ports[0].Name)}
	}
	if c.MaxCallSize < c.MaxFileSize {
		return &Error{File: file, Key: "snapshot.max-call-size", Msg: fmt.Sprintf("%s is below max-file-size (%s): a file between the two could never be committed", FormatSize(c.MaxCallSize), FormatSize(c.MaxFileSize))}
	}
	byEnv := map[string]string{}
	for _, p := range c.Ports {
		if other, ok := byEnv[p.EnvSuffix()]; ok {
			return &Error{File: file, Key: "ports", Msg: fmt.Sprintf("ports %q and %q would both set PORT_%s; rename one", other, p.Name, p.EnvSuffix())}
		}
		byEnv[p.EnvSuffix()] = p.Name
	}
	for k := range c.Env {
		if !validEnvKey(k) {
			return &Error{File: file, Key: "docker.env." + k, Msg: fmt.Sprintf("%q is not a valid environment variable name", k)}
		}
	}
	if err := c.validateSecrets(file); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(c.Services)) {
		if len(c.Services[name].Command) == 0 {
			return &Error{File: file, Key: "container.services." + name + ".command", Msg: fmt.Sprintf("service %q needs a command", name)}
		}
	}
	return nil
}

// validateAllow checks [network]: a known mode, and an allowlist exactly
// when the mode is "allow", of entries the egress proxy can match.
func (c Config) validateAllow(file string) error {
	switch c.mode {
	case "", "none", "open", "allow":
	default:
		return &Error{File: file, Key: "network.mode", Msg: fmt.Sprintf(`%q: use "none", "allow" or "open"`, c.mode)}
	}
	if c.Allow == nil {
		if c.mode == "allow" {
			return &Error{File: file, Key: "network.allow", Msg: `mode "allow" needs the hosts it allows: allow = ["proxy.golang.org", "*.npmjs.org"]`}
		}
		return nil
	}
	if c.mode != "allow" {
		return &Error{File: file, Key: "network.allow", Msg: `an allowlist needs mode = "allow" under [network]`}
	}
	if len(c.Allow) == 0 {
		return &Error{File: file, Key: "network.allow", Msg: `the allowlist is empty: list hosts, or use mode = "none"`}
	}
	if c.Network != "none" {
		return &Error{File: file, Key: "docker.network", Msg: fmt.Sprintf(`%q conflicts with [network] mode = "allow": the sandbox's only way out is its egress proxy`, c.Network)}
	}
	if len(c.Ports) > 0 {
		return &Error{File: file, Key: "network.mode", Msg: fmt.Sprintf(`port %q needs mode = "open": with "allow" the sandbox has no network of its own`, c.Ports[0].Name)}
	}
	if _, err := egress.Parse(c.Allow); err != nil {
		return &Error{File: file, Key: "network.allow", Msg: err.Error()}
	}
	if c.EgressNetwork != "" && !networkNameRE.MatchString(c.EgressNetwork) || c.EgressNetwork == "host" || c.EgressNetwork == "none" {
		return &Error{File: file, Key: "network.egress", Msg: fmt.Sprintf(`%q: use "bridge" or the name of a docker network (not "host" or "none")`, c.EgressNetwork)}
	}
	return nil
}

// validateSetup checks [network] setup: an allowlist of its own needs a
// sandbox whose network is none or an allowlist, since an open sandbox
// would not be held to it.
func (c Config) validateSetup(file string) error {
	if c.SetupAllow == nil {
		return nil
	}
	if c.Network != "none" {
		return &Error{File: file, Key: "network.setup", Msg: fmt.Sprintf(`an allowlist for setup needs mode = "none" or "allow", not network %q, which already reaches every host`, c.Network)}
	}
	if len(c.SetupAllow) == 0 {
		return &Error{File: file, Key: "network.setup", Msg: `the setup allowlist is empty: list hosts, or leave setup out`}
	}
	if _, err := egress.Parse(c.SetupAllow); err != nil {
		return &Error{File: file, Key: "network.setup", Msg: err.Error()}
	}
	return nil
}

// MinSecret is the shortest secret value Litterbox takes: a shorter one
// cannot be told from ordinary text, so it could be neither redacted from
// output nor kept out of commits.
const MinSecret = 8

// reservedEnv are variables Litterbox sets itself, which a secret would
// silently lose to or break, and those the docker or podman client reads:
// a secret reaches the sandbox through the client's own environment.
var reservedEnv = regexp.MustCompile(`^(?i:LITTERBOX_.*|PORT_.*|HTTPS?_PROXY|NO_PROXY|PATH|HOME|DOCKER_.*|CONTAINERS?_.*)$`)

// validateSecrets checks [secrets]: names a shell can use, and exactly one
// source each.
func (c Config) validateSecrets(file string) error {
	for _, name := range slices.Sorted(maps.Keys(c.Secrets)) {
		s, key := c.Secrets[name], "secrets."+name
		switch {
		case !validEnvKey(name):
			return &Error{File: file, Key: key, Msg: fmt.Sprintf("%q is not a valid environment variable name", name)}
		case reservedEnv.MatchString(name):
			return &Error{File: file, Key: key, Msg: fmt.Sprintf("%s is set by Litterbox itself; give the secret another name", name)}
		case (s.Env == "") == (s.Command == ""):
			return &Error{File: file, Key: key, Msg: `give exactly one of env = "VARIABLE" or command = "program args"`}
		case s.Env != "" && !validEnvKey(s.Env):
			return &Error{File: file, Key: key + ".env", Msg: fmt.Sprintf("%q is not a valid environment variable name", s.Env)}
		case s.Command != "":
			if argv, err := shlex.Split(s.Command); err != nil || len(argv) == 0 {
				return &Error{File: file, Key: key + ".command", Msg: fmt.Sprintf("%q is not a command line (quote it as a shell would)", s.Command)}
			}
		}
		if _, dup := c.Env[name]; dup {
			return &Error{File: file, Key: key, Msg: fmt.Sprintf("%s is also in [docker] env, which would put its value in docker inspect; keep it in [secrets] only", name)}
		}
	}
	return nil
}

var networkNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

var envKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func validEnvKey(k string) bool { return envKeyRE.MatchString(k) }

var serviceNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

func validServiceName(s string) bool { return serviceNameRE.MatchString(s) }

// ValidServiceName reports whether s can name a service.
func ValidServiceName(s string) bool { return validServiceName(s) }

// EnvName is NAME in PORT_NAME: the name's slug in upper case, with '_' for
// '-'.
func EnvName(name string) string {
	return strings.ToUpper(strings.ReplaceAll(slug.Make(name), "-", "_"))
}

// The types below check a value where it is decoded, so the parser's error
// carries the line and key of the bad value.

type portNumber int

func (p *portNumber) UnmarshalTOML(v any) error {
	n, ok := v.(int64)
	if !ok {
		return fmt.Errorf("want a port number, got %s", tomlType(v))
	}
	if n < 1 || n > 65535 {
		return fmt.Errorf("port %d is out of range 1-65535", n)
	}
	*p = portNumber(n)
	return nil
}

type memorySize string

var memoryRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([bkmgBKMG]?)$`)

// minMemory is the engine's own floor (docker refuses less than 6 MiB):
// checked here so that create fails before it makes anything.
const minMemory = 6 << 20

func (m *memorySize) UnmarshalTOML(v any) error {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	default:
		return fmt.Errorf("want a size such as \"2g\", got %s", tomlType(v))
	}
	n := memBytes(s)
	if n < 0 {
		return fmt.Errorf("memory %q: want a size such as \"512m\" or \"2g\"", s)
	}
	if n < minMemory {
		return fmt.Errorf("memory %v is %.0f bytes, below the engine's minimum of 6m: want a size such as \"512m\" or \"2g\"", v, n)
	}
	*m = memorySize(s)
	return nil
}

// memBytes is a size as docker reads it ("512m", "2g", bytes), -1 if it
// is not one.
func memBytes(s string) float64 {
	sub := memoryRE.FindStringSubmatch(s)
	if sub == nil {
		return -1
	}
	n, _ := strconv.ParseFloat(sub[1], 64)
	return n * map[string]float64{"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[strings.ToLower(sub[2])]
}

type cpuCount string

func (c *cpuCount) UnmarshalTOML(v any) error {
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case float64:
		f = x
	default:
		return fmt.Errorf("want a number of CPUs such as 2 or 0.5, got %s", tomlType(v))
	}
	if f < 0.01 || f > 1024 {
		return fmt.Errorf("cpus %v: want a number of CPUs from 0.01 up, such as 2 or 0.5", v)
	}
	*c = cpuCount(strconv.FormatFloat(f, 'f', -1, 64))
	return nil
}

// byteSize is a size in bytes, written as a number of bytes or with a
// unit: "50m", "50MiB", "10g", "1.5G".
type byteSize int64

var sizeRE = regexp.MustCompile(`(?i)^([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?b)?$`)

func (b *byteSize) UnmarshalTOML(v any) error {
	var s string
	switch x := v.(type) {
	case string:
		s = strings.TrimSpace(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	default:
		return fmt.Errorf("want a size such as \"50m\" or \"10g\", got %s", tomlType(v))
	}
	n, ok := ParseSize(s)
	if !ok || n < 1 {
		return fmt.Errorf("size %q: want a size such as \"50m\" or \"10g\"", s)
	}
	*b = byteSize(n)
	return nil
}

// ParseSize reads a size as config files write it.
func ParseSize(s string) (int64, bool) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	unit := map[string]float64{"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[strings.ToLower(m[2])]
	if err != nil || f*unit >= 1<<62 {
		return 0, false
	}
	return int64(f * unit), true
}

// FormatSize writes n the way sizes are written in config files, exactly
// when it can ("50m", "10g"), else in bytes.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"t", 1 << 40}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

type pidsLimit int

func (p *pidsLimit) UnmarshalTOML(v any) error {
	n, ok := v.(int64)
	if !ok {
		return fmt.Errorf("want a number of processes, got %s", tomlType(v))
	}
	if n < 16 || n > 1<<22 {
		return fmt.Errorf("pids %d: want at least 16 (the sandbox's own tools need a few)", n)
	}
	*p = pidsLimit(n)
	return nil
}

type userID string

var userRE = regexp.MustCompile(`^[0-9]+(:[0-9]+)?$`)

func (u *userID) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("want \"uid:gid\", got %s", tomlType(v))
	}
	if !userRE.MatchString(s) {
		return fmt.Errorf("user %q: want numeric \"uid:gid\" such as \"1000:1000\"", s)
	}
	if !strings.Contains(s, ":") {
		s += ":" + s
	}
	*u = userID(s)
	return nil
}

// command is a service's argv: an array of strings, or one string run by sh.
type command []string

func (c *command) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return errors.New("the command must not be empty")
		}
		*c = command{"sh", "-c", x}
	case []any:
		if len(x) == 0 {
			return errors.New("the command must not be empty")
		}
		out := make(command, len(x))
		for i, a := range x {
			s, ok := a.(string)
			if !ok {
				return fmt.Errorf("command argument %d: want a string, got %s", i+1, tomlType(a))
			}
			out[i] = s
		}
		*c = out
	default:
		return fmt.Errorf("want an array of strings or a string, got %s", tomlType(v))
	}
	return nil
}

// setupNet is [network] setup: "open", or an allowlist of its own.
type setupNet struct {
	open  bool
	allow []string
}

func (n *setupNet) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		if x != "open" {
			return fmt.Errorf(`%q: use "open" or a list of hosts such as ["registry.npmjs.org"]`, x)
		}
		n.open = true
	case []any:
		n.allow = make([]string, len(x))
		for i, a := range x {
			s, ok := a.(string)
			if !ok {
				return fmt.Errorf("host %d: want a string, got %s", i+1, tomlType(a))
			}
			n.allow[i] = s
		}
	default:
		return fmt.Errorf(`want "open" or an array of hosts, got %s`, tomlType(v))
	}
	return nil
}

// signals a service may be sent, by their names without "SIG".
var signalNames = []string{"HUP", "INT", "QUIT", "KILL", "USR1", "USR2", "TERM", "CONT", "STOP", "WINCH", "ALRM", "PWR"}

type signal string

func (s *signal) UnmarshalTOML(v any) error {
	name, ok := v.(string)
	if !ok {
		return fmt.Errorf("want a signal name such as \"SIGTERM\", got %s", tomlType(v))
	}
	n := strings.TrimPrefix(strings.ToUpper(name), "SIG")
	if !slices.Contains(signalNames, n) {
		return fmt.Errorf("unknown signal %q: want one of SIG%s", name, strings.Join(signalNames, ", SIG"))
	}
	*s = signal(n)
	return nil
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case bool:
		return "true or false"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}
