package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
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
	files, names = cfg.dropDevcontainer(files, names)
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

// dropDevcontainer leaves out the devcontainer.json when a Litterbox
// config file of the repository chooses the image itself: the
// devcontainer's setup command, user and ports belong to its own image,
// so the file that chose another wins as a whole, not key by key.
func (cfg *Config) dropDevcontainer(files []*fileConfig, names []string) ([]*fileConfig, []string) {
	dc := slices.Index(names, cfg.devcontainerFileName())
	if dc < 0 {
		return files, names
	}
	for i, fc := range files {
		if (names[i] == File || names[i] == LocalFile) && (fc.Docker.Image != nil || fc.Docker.Build != nil) {
			cfg.Notes = slices.DeleteFunc(cfg.Notes, func(n string) bool { return strings.HasPrefix(n, names[dc]+": ") })
			cfg.Notes = append(cfg.Notes, fmt.Sprintf("%s: not used, because %s chooses the image; its setup command and settings are for its own", names[dc], names[i]))
			cfg.Files = slices.DeleteFunc(cfg.Files, func(f string) bool { return f == names[dc] })
			cfg.devcontainer = nil
			return slices.Delete(files, dc, dc+1), slices.Delete(names, dc, dc+1)
		}
	}
	return files, names
}

// devcontainerFileName is the name the devcontainer.json was read as, ""
// when there is none.
func (cfg *Config) devcontainerFileName() string {
	if cfg.devcontainer == nil {
		return ""
	}
	return cfg.devcontainer.Name
}

// devcontainerName stands for the devcontainer.json, wherever it is, in
// Load's order of files.
const devcontainerName = "\x00devcontainer"

// parseConfig decodes one file.
func parseConfig(name string, data []byte) (*fileConfig, error) {
	var fc fileConfig
	md, err := toml.Decode(string(data), &fc)
	if err != nil {
		return nil, tomlError(name, data, err)
	}
	if err := unknownKey(name, data, md); err != nil {
		return nil, err
	}
	if err := fc.check(name); err != nil {
		return nil, err
	}
	return &fc, nil
}

// apply overlays what the file sets onto cfg, and reports whether it set the
// network.
func (fc *fileConfig) apply(cfg *Config, name string) (networkSet bool) {
	set(&cfg.ProjectSlug, fc.Project.Slug)
	fc.recordFrom(cfg, name)
	fc.applyImage(cfg)
	fc.applyNetwork(cfg)
	fc.applySecrets(cfg)
	fc.applyLimits(cfg)
	fc.applyPorts(cfg)
	fc.applyServices(cfg)
	return fc.Docker.Network != nil || fc.Network.Mode != nil
}

// recordFrom notes name as the file that last set each setting that can
// loosen a sandbox (Config.From).
func (fc *fileConfig) recordFrom(cfg *Config, name string) {
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
	from("docker.image", d.Image != nil)
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
	from("docker.gvisor-runtime", d.GVisor != nil)
	from("docker.gvisor-flags", d.GVisorFlags != nil)
	from("kubernetes.runtime-class", fc.Kubernetes.RuntimeClass != nil)
	from("limits.sandboxes", fc.Limits.Sandboxes != nil)
	from("limits.memory-budget", fc.Limits.MemoryBudget != nil)
	from("snapshot.max-file-size", fc.Snapshot.MaxFileSize != nil)
	from("snapshot.max-call-size", fc.Snapshot.MaxCallSize != nil)
	for _, p := range fc.Ports {
		from("ports."+*p.Name, true)
	}
}

// applyImage overlays the image or build and the setup.
func (fc *fileConfig) applyImage(cfg *Config) {
	d := fc.Docker
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
	if fc.Setup.Keep != nil {
		cfg.SetupKeep = slices.Clone(fc.Setup.Keep)
	}
	set(&cfg.SetupCache, fc.Setup.Cache)
	set(&cfg.SetupCommand, d.SetupCommand)
}

// applyNetwork overlays [docker] network and [network].
func (fc *fileConfig) applyNetwork(cfg *Config) {
	d := fc.Docker
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
}

func (fc *fileConfig) applySecrets(cfg *Config) {
	for name, sec := range fc.Secrets {
		if cfg.Secrets == nil {
			cfg.Secrets = map[string]SecretSpec{}
		}
		var spec SecretSpec
		set(&spec.Env, sec.Env)
		set(&spec.Command, sec.Command)
		spec.Inject = slices.Clone(sec.Inject)
		set(&spec.Header, sec.Header)
		cfg.Secrets[name] = spec
	}
}

// applyLimits overlays the rest of [docker] and [snapshot]: the user, the
// bounds and the environment.
func (fc *fileConfig) applyLimits(cfg *Config) {
	d := fc.Docker
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
	set(&cfg.Isolation, d.Isolation)
	set(&cfg.GVisorRuntime, d.GVisor)
	if d.GVisorFlags != nil {
		cfg.GVisorFlags = slices.Clone(d.GVisorFlags)
	}
	set(&cfg.RuntimeClass, fc.Kubernetes.RuntimeClass)
	if l := fc.Limits.Sandboxes; l != nil {
		cfg.MaxSandboxes = int(*l)
	}
	if l := fc.Limits.MemoryBudget; l != nil {
		cfg.MemoryBudget = string(*l)
	}
	if l := fc.Pool.Size; l != nil {
		cfg.PoolSize = int(*l)
	}
	if l := fc.Limits.Idle; l != nil {
		cfg.Idle = time.Duration(*l)
	}
	setSize(&cfg.MaxFileSize, fc.Snapshot.MaxFileSize)
	setSize(&cfg.MaxCallSize, fc.Snapshot.MaxCallSize)
	setSize(&cfg.OutputLimit, fc.Agent.OutputLimit)
	set(&cfg.ReviewCheck, fc.Review.Check)
	if fc.Agent.Command != nil {
		cfg.AgentCommand = fc.Agent.Command
	}
	if len(d.Env) > 0 {
		if cfg.Env == nil {
			cfg.Env = map[string]string{}
		}
		maps.Copy(cfg.Env, d.Env)
	}
}

// applyPorts merges ports by name: a local file can retarget or add one
// without repeating the rest.
func (fc *fileConfig) applyPorts(cfg *Config) {
	for _, p := range fc.Ports {
		spec := PortSpec{Name: *p.Name, Target: int(*p.Target)}
		if i := slices.IndexFunc(cfg.Ports, func(q PortSpec) bool { return q.Name == spec.Name }); i >= 0 {
			cfg.Ports[i] = spec
		} else {
			cfg.Ports = append(cfg.Ports, spec)
		}
	}
}

// applyServices merges services by name, and each one key by key.
func (fc *fileConfig) applyServices(cfg *Config) {
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
