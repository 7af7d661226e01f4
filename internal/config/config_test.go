package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestMain keeps the user's own config out of every test.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "litterbox-config-test")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func writeConfigs(t *testing.T, main, local string) string {
	t.Helper()
	dir := t.TempDir()
	if main != "" {
		if err := os.WriteFile(filepath.Join(dir, File), []byte(main), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if local != "" {
		if err := os.WriteFile(filepath.Join(dir, LocalFile), []byte(local), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadConfigDefaults(t *testing.T) {
	cfg, err := Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	if !reflect.DeepEqual(cfg, want) {
		t.Fatalf("got %+v, want %+v", cfg, want)
	}
	if cfg.Image != "busybox:latest" || cfg.SetupCommand != "echo hello world" || cfg.Network != "none" {
		t.Fatalf("defaults changed: %+v", cfg)
	}
}

// The Rust Litterbox's files have [project], [docker] image/setup-command and
// [[ports]] only; they must work unchanged.
func TestLoadConfigRustEra(t *testing.T) {
	dir := writeConfigs(t, `
[project]
slug = "webshop"

[docker]
image = "node:20"
setup-command = "npm ci"

[[ports]]
name = "backend"
target = 3000

[[ports]]
name = "frontend"
target = 5173
`, "")
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ProjectSlug != "webshop" || cfg.Image != "node:20" || cfg.SetupCommand != "npm ci" {
		t.Fatalf("got %+v", cfg)
	}
	want := []PortSpec{{"backend", 3000}, {"frontend", 5173}}
	if !reflect.DeepEqual(cfg.Ports, want) {
		t.Fatalf("ports %+v, want %+v", cfg.Ports, want)
	}
	if cfg.Network != "bridge" {
		t.Fatalf("ports with no network set: network %q, want bridge", cfg.Network)
	}
	if !reflect.DeepEqual(cfg.Files, []string{File}) {
		t.Fatalf("files %v", cfg.Files)
	}
}

func TestLoadConfigEveryKeyAndLocalOverride(t *testing.T) {
	dir := writeConfigs(t, `
[project]
slug = "shop"
[docker]
image = "busybox:latest"
setup-command = "true"
network = "bridge"
user = "1000:1000"
read-only = true
memory = "1g"
cpus = 1.5
pids = 256
env = { RUST_LOG = "debug", KEEP = "yes" }
[[ports]]
name = "www"
target = 8080
[container.services.web]
command = ["busybox", "httpd", "-f", "-p", "8080", "-h", "/src"]
signals = { stop = "SIGTERM", restart = "SIGHUP" }
[container.services.worker]
command = "while :; do sleep 1; done"
[review]
check = "make test"
`, `
[review]
check = "make check"
[docker]
memory = "512m"
cpus = 1
env = { RUST_LOG = "info" }
[[ports]]
name = "www"
target = 9090
[[ports]]
name = "api"
target = 7000
[container.services.web]
signals = { stop = "INT" }
stop-timeout = 3
`)
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Memory != "512m" || cfg.CPUs != "1" || cfg.PidsLimit != 256 || cfg.Network != "bridge" || cfg.SetupCommand != "true" {
		t.Fatalf("scalars: %+v", cfg)
	}
	if cfg.ReviewCheck != "make check" {
		t.Fatalf("[review] check %q, want the local file's", cfg.ReviewCheck)
	}
	if !reflect.DeepEqual(cfg.Env, map[string]string{"RUST_LOG": "info", "KEEP": "yes"}) {
		t.Fatalf("env %v", cfg.Env)
	}
	if !reflect.DeepEqual(cfg.Ports, []PortSpec{{"www", 9090}, {"api", 7000}}) {
		t.Fatalf("ports %+v", cfg.Ports)
	}
	web := cfg.Services["web"]
	if web.Stop != "INT" || web.Restart != "HUP" || web.StopTimeout != 3 || web.Command[1] != "httpd" {
		t.Fatalf("web %+v", web)
	}
	worker := cfg.Services["worker"]
	if !reflect.DeepEqual(worker, ServiceSpec{Command: []string{"sh", "-c", "while :; do sleep 1; done"}, Stop: "TERM", StopTimeout: 10}) {
		t.Fatalf("worker %+v", worker)
	}
	if !reflect.DeepEqual(cfg.Files, []string{File, LocalFile}) {
		t.Fatalf("files %v", cfg.Files)
	}
}

func TestLoadConfigPool(t *testing.T) {
	cfg, err := Load(writeConfigs(t, "[pool]\nsize = 3\n", "[pool]\nsize = 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PoolSize != 1 {
		t.Fatalf("pool size %d, want the local file's 1", cfg.PoolSize)
	}
	if cfg, _ := Load(writeConfigs(t, "", "")); cfg.PoolSize != 0 {
		t.Fatalf("default pool size %d, want 0", cfg.PoolSize)
	}
}

func TestLoadConfigLocalOnly(t *testing.T) {
	cfg, err := Load(writeConfigs(t, "", "[docker]\nsetup-command = \"make\"\nread-only = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SetupCommand != "make" || cfg.ReadOnly || cfg.Image != "busybox:latest" {
		t.Fatalf("got %+v", cfg)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	cases := []struct {
		name, main, local string
		file              string
		line              int
		key, msg          string
	}{
		{"syntax", "[docker\nimage = 1\n", "", File, 2, "", "expected"},
		{"type", "[docker]\nimage = 3\n", "", File, 2, "docker.image", "want a string, got an integer"},
		{"type in local", "", "[docker]\n\nread-only = \"yes\"\n", LocalFile, 3, "docker.read-only", "want true or false"},
		{"port 0", "[[ports]]\nname = \"www\"\ntarget = 0\n", "", File, 3, "ports.target", "port 0 is out of range"},
		{"port 70000", "[[ports]]\nname = \"www\"\ntarget = 70000\n", "", File, 3, "ports.target", "port 70000 is out of range"},
		{"port string", "[[ports]]\nname = \"www\"\ntarget = \"80\"\n", "", File, 3, "ports.target", "want a port number, got a string"},
		{"port no target", "[[ports]]\nname = \"www\"\n", "", File, 0, "ports[1].target", "needs a target"},
		{"port no name", "[[ports]]\ntarget = 80\n", "", File, 0, "ports[1].name", "needs a name"},
		{"same env var", "[docker]\nnetwork = \"bridge\"\n[[ports]]\nname = \"web-ui\"\ntarget = 80\n[[ports]]\nname = \"WEB_UI\"\ntarget = 81\n", "", File, 0, "ports", "both set PORT_WEB_UI"},
		{"ports without network", "[docker]\nnetwork = \"none\"\n[[ports]]\nname = \"www\"\ntarget = 80\n", "", File, 0, "docker.network", "needs a network"},
		{"local turns network off", "[[ports]]\nname = \"www\"\ntarget = 80\n", "[docker]\nnetwork = \"none\"\n", File + " + " + LocalFile, 0, "docker.network", "needs a network"},
		{"unknown signal", "[container.services.web]\ncommand = [\"x\"]\nsignals = { stop = \"SIGFOO\" }\n", "", File, 3, "container.services.web.signals.stop", `unknown signal "SIGFOO"`},
		{"unknown signal key", "[container.services.web]\ncommand = [\"x\"]\nsignals = { reload = \"HUP\" }\n", "", File, 0, "container.services.web.signals.reload", "signals are"},
		{"service without command", "[container.services.web]\nsignals = { stop = \"TERM\" }\n", "", File, 0, "container.services.web.command", "needs a command"},
		{"service command type", "[container.services.web]\ncommand = [\"a\", 1]\n", "", File, 2, "container.services.web.command", "argument 2: want a string"},
		{"memory", "[docker]\nmemory = \"lots\"\n", "", File, 2, "docker.memory", `memory "lots"`},
		{"memory negative", "[docker]\nmemory = -5\n", "", File, 2, "docker.memory", `memory "-5"`},
		{"memory in bytes", "[docker]\nmemory = 5\n", "", File, 2, "docker.memory", "memory 5 is 5 bytes, below the engine's minimum of 6m"},
		{"memory too small", "[docker]\nmemory = \"4m\"\n", "", File, 2, "docker.memory", "below the engine's minimum"},
		{"memory with unit", "[docker]\nmemory = \"2 g\"\n", "", File, 2, "docker.memory", `memory "2 g"`},
		{"cpus", "[docker]\ncpus = 0\n", "", File, 2, "docker.cpus", "from 0.01 up"},
		{"cpus tiny", "[docker]\ncpus = 0.001\n", "", File, 2, "docker.cpus", "from 0.01 up"},
		{"cpus string", "[docker]\ncpus = \"2\"\n", "", File, 2, "docker.cpus", "got a string"},
		{"pids string", "[docker]\npids = \"many\"\n", "", File, 2, "docker.pids", "got a string"},
		{"pids", "[docker]\npids = 2\n", "", File, 2, "docker.pids", "at least 16"},
		{"user", "[docker]\nuser = \"root\"\n", "", File, 2, "docker.user", "numeric"},
		{"env name", "[docker]\nenv = { \"A-B\" = \"x\" }\n", "", File, 0, "docker.env.A-B", "not a valid environment variable"},
		{"env value", "[docker]\nenv = { A = 1 }\n", "", File, 2, "docker.env.A", "want a string"},
		{"slug", "[project]\nslug = \"Not A Slug\"\n", "", File, 0, "project.slug", "lowercase"},
		{"empty network", "[docker]\nnetwork = \"\"\n", "", File, 0, "docker.network", "must not be empty"},
		{"another container's network", "[docker]\nnetwork = \"container:db\"\n", "", File, 0, "docker.network", `"container:db": use "none", "bridge" or the name of a docker network`},
		{"a namespace path", "[docker]\nnetwork = \"ns:/proc/1/ns/net\"\n", "", File, 0, "docker.network", "the name of a docker network"},
		{"network mode", "[network]\nmode = \"some\"\n", "", File, 0, "network.mode", `"some": use "none", "allow" or "open"`},
		{"allow without hosts", "[network]\nmode = \"allow\"\n", "", File, 0, "network.allow", `mode "allow" needs the hosts it allows`},
		{"hosts without allow", "[network]\nallow = [\"a.test\"]\n", "", File, 0, "network.allow", `an allowlist needs mode = "allow"`},
		{"bad host", "[network]\nmode = \"allow\"\nallow = [\"http://a.test\"]\n", "", File, 0, "network.allow", `allow entry "http://a.test"`},
		{"allow and a docker network", "[docker]\nnetwork = \"bridge\"\n[network]\nmode = \"allow\"\nallow = [\"a.test\"]\n", "", File, 0, "docker.network", `set [network] mode or the older [docker] network, not both`},
		{"allow and ports", "[network]\nmode = \"allow\"\nallow = [\"a.test\"]\n[[ports]]\nname = \"www\"\ntarget = 80\n", "", File, 0, "network.mode", `port "www" needs mode = "open"`},
		{"disk", "[docker]\ndisk = \"big\"\n", "", File, 2, "docker.disk", `size "big": want a size such as "50m" or "10g"`},
		{"disk zero", "[docker]\ndisk = 0\n", "", File, 2, "docker.disk", `size "0"`},
		{"file size type", "[snapshot]\nmax-file-size = true\n", "", File, 2, "snapshot.max-file-size", "got true or false"},
		{"unknown table", "[dokcer]\nimage = \"golang:1.23\"\n", "", File, 1, "", "unknown table [dokcer]; did you mean [docker]?"},
		{"unknown key", "[docker]\nsetup-command = \"x\"\nimgae = \"golang:1.23\"\n", "", File, 3, "", "unknown key imgae in [docker]; did you mean image?"},
		{"key in the wrong table", "[docker]\nallow = [\"a.test\"]\n", "", File, 2, "", "unknown key allow in [docker]; allow belongs in [network]"},
		{"unknown in local", "", "[setup]\ninput = [\"go.sum\"]\n", LocalFile, 2, "", "unknown key input in [setup]; did you mean inputs?"},
		{"unknown in a port", "[[ports]]\nname = \"www\"\nport = 80\n", "", File, 3, "", "unknown key port in [ports]"},
		{"unknown in a service", "[container.services.web]\ncommand = [\"x\"]\nstop-timout = 3\n", "", File, 3, "", "unknown key stop-timout in [container.services.web]; did you mean stop-timeout?"},
		{"unknown in a secret", "[secrets]\nTOKEN = { cmd = \"pass show x\" }\n", "", File, 2, "", "unknown key cmd in [secrets.TOKEN]; known: command, env"},
		{"unknown top key", "imag = \"x\"\n", "", File, 1, "", "unknown key imag; known: agent, container, docker"},
		{"keep relative", "[setup]\nkeep = [\"venv\"]\n", "", File, 0, "setup.keep", `"venv": want an absolute path`},
		{"keep unclean", "[setup]\nkeep = [\"/opt/../etc\"]\n", "", File, 0, "setup.keep", `"/opt/../etc": want an absolute path`},
		{"keep root", "[setup]\nkeep = [\"/\"]\n", "", File, 0, "setup.keep", "would hide the image's files"},
		{"keep src", "[setup]\nkeep = [\"/src/node_modules\"]\n", "", File, 0, "setup.keep", `overlaps /src`},
		{"keep home", "[setup]\nkeep = [\"/home\"]\n", "", File, 0, "setup.keep", `overlaps /home/litterbox`},
		{"keep helper", "[setup]\nkeep = [\"/.litterbox\"]\n", "", File, 0, "setup.keep", `overlaps /.litterbox`},
		{"keep proc", "[setup]\nkeep = [\"/proc/self\"]\n", "", File, 0, "setup.keep", `overlaps /proc`},
		{"keep nested", "[setup]\nkeep = [\"/opt\", \"/opt/venv\"]\n", "", File, 0, "setup.keep", `"/opt" and "/opt/venv": one holds the other`},
		{"keep many", "[setup]\nkeep = [\"/a\", \"/b\", \"/c\", \"/d\", \"/e\", \"/f\", \"/g\", \"/h\", \"/i\"]\n", "", File, 0, "setup.keep", "9 paths: at most 8"},
		{"pool negative", "[pool]\nsize = -1\n", "", File, 2, "pool.size", "want from 0 to 32"},
		{"pool string", "[pool]\nsize = \"2\"\n", "", File, 2, "pool.size", "want a number of warm sandboxes such as 2, got a string"},
		{"pool key", "[pool]\nsise = 2\n", "", File, 2, "", "unknown key sise in [pool]; did you mean size?"},
		{"call below file", "[snapshot]\nmax-file-size = \"1g\"\n", "", File, 0, "snapshot.max-call-size", "500m is below max-file-size (1g)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(writeConfigs(t, c.main, c.local))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a Error", err)
			}
			if ce.File != c.file || ce.Line != c.line || ce.Key != c.key || !strings.Contains(ce.Msg, c.msg) {
				t.Fatalf("got file=%q line=%d key=%q msg=%q\nwant file=%q line=%d key=%q msg~%q", ce.File, ce.Line, ce.Key, ce.Msg, c.file, c.line, c.key, c.msg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{"www": "WWW", "web-ui": "WEB_UI", "a..b": "A_B", "-x-": "X", "Backend2": "BACKEND2", "!!": ""} {
		if got := EnvName(in); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzLoadConfig(f *testing.F) {
	f.Add("[docker]\nimage = \"x\"\n[[ports]]\nname = \"a\"\ntarget = 80\n")
	f.Add("[container.services.a]\ncommand = [\"x\"]\nsignals = { stop = \"HUP\" }\n")
	f.Add("[docker\n")
	f.Fuzz(func(t *testing.T, s string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, File), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(dir)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		for _, p := range cfg.Ports {
			if p.Target < 1 || p.Target > 65535 || p.EnvSuffix() == "" {
				t.Fatalf("bad port accepted: %+v", p)
			}
		}
	})
}

// TestWeakeningsNameTheirFile: every setting that loosens a sandbox is
// listed with the file that set it last, the user's own config included.
func TestWeakeningsNameTheirFile(t *testing.T) {
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if cfg, err := Load(t.TempDir()); err != nil || len(cfg.Weakenings()) != 0 {
		t.Fatalf("defaults loosen %v (%v)", cfg.Weakenings(), err)
	}
	user := filepath.Join(xdg, "litterbox", "config.toml")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("[docker]\npids = 4096\nmemory = \"1g\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := writeConfigs(t,
		"[docker]\nnetwork = \"bridge\"\nuser = \"0:0\"\nread-only = false\nmemory = \"8g\"\ncpus = 64\ndisk = \"20GiB\"\n[snapshot]\nmax-file-size = \"40m\"\nmax-call-size = \"1.5g\"\n[[ports]]\nname = \"www\"\ntarget = 80\n",
		"[docker]\nread-only = true\n[[ports]]\nname = \"db\"\ntarget = 5432\n")
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.Weakenings() {
		got = append(got, w.String()+" @ "+w.File)
	}
	want := []string{
		`docker.network = "bridge" @ ` + File,
		`docker.user = "0:0" @ ` + File,
		`docker.memory = "8g" @ ` + File,
		`docker.cpus = 64 @ ` + File,
		`docker.pids = 4096 @ ` + user,
		`docker.disk = "20g" @ ` + File,
		`snapshot.max-call-size = "1536m" @ ` + File,
		`ports.www = 80 @ ` + File,
		`ports.db = 5432 @ ` + LocalFile,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("weakenings:\n got %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(cfg.Files, []string{user, File, LocalFile}) {
		t.Errorf("files %q", cfg.Files)
	}
	// Ports without a network get bridge from the file that asked for them.
	cfg, err = Load(writeConfigs(t, "", "[[ports]]\nname = \"www\"\ntarget = 80\n"))
	if err != nil || cfg.Network != "bridge" || cfg.From["docker.network"] != LocalFile {
		t.Errorf("auto bridge: %q from %q (%v)", cfg.Network, cfg.From["docker.network"], err)
	}
	// An error in the user's file names it.
	if err := os.WriteFile(user, []byte("[docker]\npids = 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.HasPrefix(err.Error(), user+", line 2, key docker.pids") {
		t.Errorf("user file error: %v", err)
	}
}

func TestUserFileIgnoresARelativeXDGConfigHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "cfg")
	if got := UserFile(); got != filepath.Join(home, ".config", "litterbox", "config.toml") {
		t.Errorf("UserFile() = %q", got)
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{"50m": 50 << 20, "50MiB": 50 << 20, "10g": 10 << 30, "10 GB": 10 << 30, "1.5g": 3 << 29, "4096": 4096, "2k": 2048, "1t": 1 << 40} {
		if got, ok := ParseSize(in); !ok || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "m", "-1m", "1x", "1e9", "9999999999t"} {
		if got, ok := ParseSize(in); ok {
			t.Errorf("ParseSize(%q) = %d, want a refusal", in, got)
		}
	}
	for n, want := range map[int64]string{50 << 20: "50m", 10 << 30: "10g", 1536 << 20: "1536m", 1000: "1000", 1 << 40: "1t"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestNetworkModes(t *testing.T) {
	cfg, err := Load(writeConfigs(t, "[network]\nmode = \"allow\"\nallow = [\"proxy.golang.org\", \"*.npmjs.org:443\"]\negress = \"corp\"\n", ""))
	if err != nil || cfg.Network != "none" || len(cfg.Allow) != 2 || cfg.EgressNetwork != "corp" {
		t.Fatalf("allow: %+v %v", cfg, err)
	}
	if w := cfg.Weakenings(); len(w) != 2 || w[0].String() != `network.allow = ["proxy.golang.org", "*.npmjs.org:443"]` || w[0].File != File || w[1].String() != `network.egress = "corp"` {
		t.Errorf("allow weakens %v", w)
	}
	// The list is the committed file's even when the local file sets the
	// mode: it needs trust all the same.
	cfg, err = Load(writeConfigs(t, "[network]\nmode = \"allow\"\nallow = [\"evil.test\"]\n", "[network]\nmode = \"allow\"\n"))
	if w := cfg.Weakenings(); err != nil || len(w) != 1 || w[0].File != File {
		t.Errorf("committed list, local mode: %v %v", w, err)
	}
	// The older key in a later file ends the allowlist.
	cfg, err = Load(writeConfigs(t, "[network]\nmode = \"allow\"\nallow = [\"a.test\"]\n", "[docker]\nnetwork = \"none\"\n"))
	if err != nil || cfg.Allow != nil || cfg.Network != "none" {
		t.Errorf("local docker.network none: %+v %v", cfg, err)
	}
	if _, err := Load(writeConfigs(t, "", "[network]\nmode = \"allow\"\nallow = [\"a.test\"]\negress = \"host\"\n")); err == nil || !strings.Contains(err.Error(), `not "host"`) {
		t.Errorf("egress host: %v", err)
	}
	// The local file turns it off, or opens it.
	cfg, err = Load(writeConfigs(t, "[network]\nmode = \"allow\"\nallow = [\"a.test\"]\n", "[network]\nmode = \"none\"\n"))
	if err != nil || cfg.Network != "none" || cfg.Allow != nil || len(cfg.Weakenings()) != 0 {
		t.Errorf("local none: %+v %v", cfg, err)
	}
	cfg, err = Load(writeConfigs(t, "", "[network]\nmode = \"open\"\n"))
	if err != nil || cfg.Network != "bridge" || cfg.From["docker.network"] != LocalFile {
		t.Errorf("open: %+v %v", cfg, err)
	}
}

func TestSetupNetwork(t *testing.T) {
	cfg, err := Load(writeConfigs(t, "[network]\nsetup = \"open\"\n", ""))
	if err != nil || !cfg.SetupOpen || cfg.Network != "none" {
		t.Fatalf("open: %+v %v", cfg, err)
	}
	if w := cfg.Weakenings(); len(w) != 1 || w[0].String() != `network.setup = "open"` || w[0].File != File {
		t.Errorf("setup open weakens %v", w)
	}
	cfg, err = Load(writeConfigs(t, "[network]\nmode = \"allow\"\nallow = [\"a.test\"]\n", "[network]\nsetup = [\"registry.npmjs.org\"]\n"))
	if err != nil || cfg.SetupOpen || len(cfg.SetupAllow) != 1 || cfg.From["network.setup"] != LocalFile {
		t.Fatalf("list: %+v %v", cfg, err)
	}
	for _, bad := range []struct{ file, want string }{
		{"[network]\nsetup = \"closed\"\n", `"closed": use "open" or a list of hosts`},
		{"[network]\nsetup = 3\n", `want "open" or an array of hosts, got an integer`},
		{"[network]\nsetup = []\n", "the setup allowlist is empty"},
		{"[network]\nsetup = [\"1.2.3.4:99999\"]\n", "network.setup"},
		{"[network]\nmode = \"open\"\nsetup = [\"a.test\"]\n", `an allowlist for setup needs mode = "none" or "allow"`},
	} {
		if _, err := Load(writeConfigs(t, bad.file, "")); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: got %v, want %q", bad.file, err, bad.want)
		}
	}
}

func TestSecrets(t *testing.T) {
	cfg, err := Load(writeConfigs(t, "[secrets]\nNPM_TOKEN = { env = \"NPM_TOKEN\" }\n", "[secrets]\nGH_TOKEN = { command = \"secret-tool lookup gh token\" }\n"))
	if err != nil || len(cfg.Secrets) != 2 || cfg.Secrets["GH_TOKEN"].Command != "secret-tool lookup gh token" || cfg.Secrets["NPM_TOKEN"].Env != "NPM_TOKEN" {
		t.Fatalf("secrets: %+v %v", cfg, err)
	}
	w := cfg.Weakenings()
	if len(w) != 2 || w[0].String() != `secrets.GH_TOKEN = { command = "secret-tool lookup gh token" }` || w[0].File != LocalFile || w[1].File != File {
		t.Errorf("secrets weaken %v", w)
	}
	// A secret for hosts: kept with its hosts, and shown with them.
	cfg, err = Load(writeConfigs(t, "[network]\nmode = \"allow\"\nallow = [\"*.anthropic.com\"]\n[secrets]\nK = { env = \"K\", inject = [\"api.anthropic.com\"] }\nP = { env = \"P\" }\n", ""))
	if err != nil || len(cfg.Injected()) != 1 || cfg.Secrets["K"].String() != `{ env = "K", inject = ["api.anthropic.com"] }` {
		t.Errorf("inject: %v %v", cfg.Injected(), err)
	}
	// With the header its value goes in.
	cfg, err = Load(writeConfigs(t, "[network]\nmode = \"allow\"\nallow = [\"*.anthropic.com\"]\n[secrets]\nK = { env = \"K\", inject = [\"api.anthropic.com\"], header = \"x-api-key\" }\n", ""))
	if err != nil || cfg.Secrets["K"].Header != "x-api-key" || cfg.Secrets["K"].String() != `{ env = "K", inject = ["api.anthropic.com"], header = "x-api-key" }` {
		t.Errorf("header: %+v %v", cfg.Secrets, err)
	}
	for _, bad := range []struct{ file, want string }{
		{"[secrets]\n\"A-B\" = { env = \"X\" }\n", `"A-B" is not a valid environment variable name`},
		{"[secrets]\nHTTPS_PROXY = { env = \"X\" }\n", "HTTPS_PROXY is set by Litterbox itself"},
		{"[secrets]\nT = { env = \"X\", command = \"y\" }\n", "exactly one of"},
		{"[secrets]\nT = {}\n", "exactly one of"},
		{"[secrets]\nT = { command = \"a 'b\" }\n", "secrets.T.command"},
		{"[secrets]\nT = { env = \"X\" }\n[docker]\nenv = { T = \"v\" }\n", "also in [docker] env"},
		{"[secrets]\nT = { env = \"X\", inject = [\"api.test\"] }\n", `secrets.T.inject: the egress proxy puts T's value in requests to its hosts, and a sandbox has one only with [network] mode = "allow"`},
		{"[network]\nmode = \"allow\"\nallow = [\"api.test\"]\n[secrets]\nT = { env = \"X\", inject = [] }\n", "name the hosts that receive the value"},
		{"[network]\nmode = \"allow\"\nallow = [\"api.test\"]\n[secrets]\nT = { env = \"X\", inject = [\"api.test:443\"] }\n", `"api.test:443" is not a host name`},
		{"[network]\nmode = \"allow\"\nallow = [\"*.test\"]\n[secrets]\nT = { env = \"X\", inject = [\"API.test\"] }\n", `"API.test" is not a host name`},
		{"[network]\nmode = \"allow\"\nallow = [\"api.test:80\"]\n[secrets]\nT = { env = \"X\", inject = [\"api.test\"] }\n", "api.test is not in [network] allow on port 443"},
		{"[secrets]\nT = { env = \"X\", header = \"x-api-key\" }\n", "secrets.T.header: header says where the egress proxy puts an injected value: give inject"},
		{"[network]\nmode = \"allow\"\nallow = [\"api.test\"]\n[secrets]\nT = { env = \"X\", inject = [\"api.test\"], header = \"x api key\" }\n", `"x api key" is not an HTTP header name`},
		{"[network]\nmode = \"allow\"\nallow = [\"api.test\"]\n[secrets]\nT = { env = \"X\", inject = [\"api.test\"], header = \"Host\" }\n", "Host is a header the proxy or the connection owns"},
		{"[network]\nmode = \"allow\"\nallow = [\"api.test\"]\n[secrets]\nT = { env = \"X\", inject = [\"api.test\"], header = \"proxy-authorization\" }\n", "proxy-authorization is a header the proxy"},
	} {
		if _, err := Load(writeConfigs(t, bad.file, "")); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: got %v, want %q", bad.file, err, bad.want)
		}
	}
}

// A devcontainer.json is a suggestion: a .litterbox.toml or local file that
// chooses the image wins as a whole (the devcontainer's setup command is
// for its own image), and says so; one that sets only some keys wins key
// by key.
func TestDevcontainerGivesWayToAChosenImage(t *testing.T) {
	dc := `{"image": "node:20", "onCreateCommand": "npm install && pip install -r r.txt", "forwardPorts": [3000], "remoteUser": "root"}`
	write := func(dir, name, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := writeConfigs(t, "", "[docker]\nimage = \"litterbox-test/debian:bookworm\"\n")
	write(dir, ".devcontainer/devcontainer.json", dc)
	cfg, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Image != "litterbox-test/debian:bookworm" || cfg.SetupCommand != DefaultSetup || len(cfg.Ports) != 0 || cfg.User != defaultUser || cfg.Devcontainer() != nil {
		t.Errorf("the devcontainer took part: image %q setup %q ports %v user %q", cfg.Image, cfg.SetupCommand, cfg.Ports, cfg.User)
	}
	if strings.Join(cfg.Files, ",") != LocalFile || len(cfg.Notes) != 1 || cfg.Notes[0] != ".devcontainer/devcontainer.json: not used, because .litterbox.local.toml chooses the image; its setup command and settings are for its own" {
		t.Errorf("files %q, notes %q", cfg.Files, cfg.Notes)
	}

	dir = writeConfigs(t, "[docker]\nsetup-command = \"true\"\n", "")
	write(dir, ".devcontainer/devcontainer.json", dc)
	if cfg, err = Load(dir); err != nil {
		t.Fatal(err)
	}
	if cfg.Image != "node:20" || cfg.SetupCommand != "true" || cfg.From["docker.setup-command"] != File || len(cfg.Ports) != 1 {
		t.Errorf("key by key: image %q setup %q from %q ports %v", cfg.Image, cfg.SetupCommand, cfg.From["docker.setup-command"], cfg.Ports)
	}
}
