package config

import (
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/shlex"

	"github.com/litterbox-dev/litterbox/internal/egress"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/slug"
)

func (c Config) validate() error {
	file := strings.Join(c.Files, " + ")
	if c.Isolation != IsolationContainer && c.Isolation != IsolationGVisor {
		return &Error{File: file, Key: "docker.isolation", Msg: fmt.Sprintf(`%q: use "container" or "gvisor"`, c.Isolation)}
	}
	if c.GVisorRuntime == "" || strings.ContainsAny(c.GVisorRuntime, " \t\n") {
		return &Error{File: file, Key: "docker.gvisor-runtime", Msg: fmt.Sprintf(`%q: the engine's name for runsc, or its path ("runsc", "/usr/bin/runsc")`, c.GVisorRuntime)}
	}
	for _, f := range c.GVisorFlags {
		if f == "" || strings.HasPrefix(f, "-") || strings.ContainsAny(f, " \t\n") {
			return &Error{File: file, Key: "docker.gvisor-flags", Msg: fmt.Sprintf(`%q: a runsc flag without its dashes, such as "network=none"`, f)}
		}
	}
	if !slug.Valid(c.RuntimeClass) && !runtimeClassRE.MatchString(c.RuntimeClass) {
		return &Error{File: file, Key: "kubernetes.runtime-class", Msg: fmt.Sprintf(`%q: the name of a RuntimeClass of the cluster`, c.RuntimeClass)}
	}
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
	if err := CheckOutputLimit(c.OutputLimit); err != nil {
		return &Error{File: file, Key: "agent.output-limit", Msg: err.Error()}
	}
	if c.AgentCommand != nil && (len(c.AgentCommand) == 0 || c.AgentCommand[0] == "") {
		return &Error{File: file, Key: "agent.command", Msg: `want the agent's command line as a list, its program first, such as ["claude"]`}
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
		if err := c.validateInject(name, s.Inject); err != nil {
			return &Error{File: file, Key: key + ".inject", Msg: err.Error()}
		}
		if err := validateHeader(s); err != nil {
			return &Error{File: file, Key: key + ".header", Msg: err.Error()}
		}
	}
	return nil
}

// validateInject checks a secret's inject: host names the sandbox's
// allowlist lets it reach on 443, the only way a value reaches them.
func (c Config) validateInject(name string, hosts []string) error {
	if hosts == nil {
		return nil
	}
	if len(hosts) == 0 {
		return errors.New(`name the hosts that receive the value, such as inject = ["api.anthropic.com"], or leave inject out`)
	}
	allow, err := egress.Parse(c.Allow)
	if err != nil || c.Allow == nil {
		return fmt.Errorf(`the egress proxy puts %s's value in requests to its hosts, and a sandbox has one only with [network] mode = "allow": set it, with %s in [network] allow`, name, hosts[0])
	}
	for _, h := range hosts {
		if !egress.HostName(h) {
			return fmt.Errorf("%q is not a host name (lower case, no port, no wildcard)", h)
		}
		if !allow.Allows(h, 443) {
			return fmt.Errorf("%s is not in [network] allow on port 443: add it, or the value could never reach it", h)
		}
	}
	return nil
}

// validateHeader checks a secret's header: the name of one end-to-end
// request header, with inject.
func validateHeader(s SecretSpec) error {
	switch h := strings.ToLower(s.Header); {
	case h == "":
		return nil
	case s.Inject == nil:
		return errors.New(`header says where the egress proxy puts an injected value: give inject = ["host"] too, or leave header out`)
	case !headerNameRE.MatchString(s.Header):
		return fmt.Errorf("%q is not an HTTP header name (letters, digits and -, such as \"x-api-key\")", s.Header)
	case slices.Contains(unfitHeaders, h):
		return fmt.Errorf("%s is a header the proxy or the connection owns, not a credential's; use Authorization or the API's own key header", s.Header)
	}
	return nil
}

var headerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)

// unfitHeaders route, frame or end a request: a secret in one of them
// would be dropped by the proxy or change where the request goes.
var unfitHeaders = []string{"host", "content-length", "transfer-encoding", "connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate", "te", "trailer", "upgrade"}

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

// check refuses what one file may not say, whatever the other files say:
// both an image and a build, paths outside the repository, both network
// keys, and incomplete ports and services.
func (fc *fileConfig) check(name string) error {
	if fc.Docker.Image != nil && fc.Docker.Build != nil {
		return &Error{File: name, Key: "docker.build", Msg: "set image or build, not both"}
	}
	if fc.Docker.Build == nil {
		for key, v := range map[string]bool{"context": fc.Docker.Context != nil, "target": fc.Docker.Target != nil, "args": fc.Docker.Args != nil} {
			if v {
				return &Error{File: name, Key: "docker." + key, Msg: "only with build = \"path/to/Dockerfile\""}
			}
		}
	}
	for _, p := range append([]string{deref(fc.Docker.Build), deref(fc.Docker.Context)}, fc.Setup.Inputs...) {
		if p != "" && !filepath.IsLocal(filepath.FromSlash(p)) && p != "." {
			return &Error{File: name, Msg: fmt.Sprintf("path %q: want a path inside the repository, relative to its root", p)}
		}
	}
	if err := checkKeep(fc.Setup.Keep); err != "" {
		return &Error{File: name, Key: "setup.keep", Msg: err}
	}
	if fc.Docker.Network != nil && fc.Network.Mode != nil {
		return &Error{File: name, Key: "docker.network", Msg: "set [network] mode or the older [docker] network, not both"}
	}
	for i, p := range fc.Ports {
		key := fmt.Sprintf("ports[%d]", i+1)
		if p.Name == nil || *p.Name == "" {
			return &Error{File: name, Key: key + ".name", Msg: "every [[ports]] entry needs a name"}
		}
		if p.Target == nil {
			return &Error{File: name, Key: key + ".target", Msg: fmt.Sprintf("port %q needs a target (the container port)", *p.Name)}
		}
		if EnvName(*p.Name) == "" {
			return &Error{File: name, Key: key + ".name", Msg: fmt.Sprintf("port name %q has no letter or digit to name its environment variable", *p.Name)}
		}
	}
	for sn, s := range fc.Container.Services {
		key := "container.services." + sn
		if !validServiceName(sn) {
			return &Error{File: name, Key: key, Msg: fmt.Sprintf("service name %q: use letters, digits, '.', '_' and '-'", sn)}
		}
		for k := range s.Signals {
			if k != "stop" && k != "restart" {
				return &Error{File: name, Key: key + ".signals." + k, Msg: "signals are \"stop\" and \"restart\""}
			}
		}
		if s.StopTimeout != nil && (*s.StopTimeout < 0 || *s.StopTimeout > 3600) {
			return &Error{File: name, Key: key + ".stop-timeout", Msg: fmt.Sprintf("%d: want seconds from 0 to 3600", *s.StopTimeout)}
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// CheckOutputLimit refuses an output limit outside its bounds.
func CheckOutputLimit(n int64) error {
	if n < MinOutputLimit || n > MaxOutputLimit {
		return fmt.Errorf("%s is outside %s-%s", FormatSize(n), FormatSize(MinOutputLimit), FormatSize(MaxOutputLimit))
	}
	return nil
}

// runtimeClassRE is a Kubernetes object name (DNS subdomain).
var runtimeClassRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

// Home is the sandbox user's home: a volume of the sandbox's own, which
// the setup cache keeps along with /src's ignored files.
const Home = "/home/litterbox"

// maxKeep bounds [setup] keep: each path is a volume of every sandbox.
const maxKeep = 8

// keepReserved are the paths a kept volume may not cover or sit under:
// the kernel's, and Litterbox's own (/src, the home, the helper's, the
// egress proxy's socket).
var keepReserved = []string{"/proc", "/sys", "/dev", "/src", Home, protocol.Dir, protocol.EgressDir}

// checkKeep says what is wrong with a [setup] keep list, "" if nothing.
func checkKeep(keep []string) string {
	if len(keep) > maxKeep {
		return fmt.Sprintf("%d paths: at most %d (each is a volume of every sandbox)", len(keep), maxKeep)
	}
	for i, p := range keep {
		switch {
		case !path.IsAbs(p) || path.Clean(p) != p:
			return fmt.Sprintf("%q: want an absolute path inside the sandbox, such as \"/opt/venv\"", p)
		case p == "/" || p == "/tmp":
			return fmt.Sprintf("%q: a volume there would hide the image's files; name a directory below it", p)
		}
		for _, r := range keepReserved {
			if within(p, r) || within(r, p) {
				return fmt.Sprintf("%q overlaps %s, which no kept volume may cover (/src's ignored files and the home, %s, are kept already)", p, r, Home)
			}
		}
		for _, q := range keep[:i] {
			if within(p, q) || within(q, p) {
				return fmt.Sprintf("%q and %q: one holds the other; keep the outer one", q, p)
			}
		}
	}
	return ""
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}
