//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// testServers starts, on a network of their own, web servers reachable by
// name: allowed.test (also api.example.test) and denied.test, each answering
// its own name on port 80, and denied.test also on 8080. No internet needed.
func testServers(t *testing.T) (network string, ip map[string]string) {
	t.Helper()
	network = testenv.UniqueName("lbnet")
	if _, err := testenv.Docker("network", "create", network); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.Docker("network", "rm", network) })
	ip = map[string]string{}
	for _, s := range []struct{ name, aliases, ports string }{
		{"allowed", "allowed.test,api.example.test", "80"},
		{"denied", "denied.test", "80 8080"},
	} {
		c := network + "-" + s.name
		script := "mkdir -p /tmp/www && echo " + s.name + " > /tmp/www/index.html"
		for _, p := range strings.Fields(s.ports) {
			script += " && httpd -p " + p + " -h /tmp/www"
		}
		args := []string{"run", "-d", "--name", c, "--network", network}
		for _, a := range strings.Split(s.aliases, ",") {
			args = append(args, "--network-alias", a)
		}
		if _, err := testenv.Docker(append(args, "busybox:latest", "sh", "-c", script+" && sleep 3600")...); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { testenv.Docker("rm", "-f", c) })
		addr, err := testenv.Docker("inspect", "--format", "{{(index .NetworkSettings.Networks \""+network+"\").IPAddress}}", c)
		if err != nil {
			t.Fatal(err)
		}
		ip[s.name] = addr
	}
	// Reachable from an ordinary container, so that a refusal below is the
	// sandbox's and not the servers' doing.
	if out, err := testenv.Docker("run", "--rm", "--network", network, "busybox:latest", "sh", "-c",
		`printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 allowed.test 80 | tail -1`); err != nil || out != "allowed" {
		t.Fatalf("the test server does not answer: %q %v", out, err)
	}
	return network, ip
}

// viaProxy is a busybox command that asks the sandbox's proxy for url and
// prints the answer's last line.
func viaProxy(url string) string {
	return `printf 'GET ` + url + ` HTTP/1.0\r\n\r\n' | nc -w 5 127.0.0.1 3128 | tail -1`
}

// A sandbox with an allowlist reaches the listed hosts through its proxy,
// and nothing else: another name, another port, an IP address and DNS fail
// within 2 s; refusals are logged; the proxy follows the sandbox through
// pause, resume and delete.
func TestIntegrationEgressAllowlist(t *testing.T) {
	network, ip := testServers(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbeg"))
	testenv.NewRepo(t, dir, testenv.SmallFiles)
	cfg := config.Default()
	cfg.Allow, cfg.EgressNetwork = []string{"allowed.test", "*.example.test", "denied.test:8080"}, network
	m, err := Open(ctx, testenv.Exec(), engine.Docker, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	c, err := m.Create(ctx, create.CreateOptions{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Network != "allow" || len(c.Allow) != 3 {
		t.Errorf("create reports network %q, allow %v", c.Network, c.Allow)
	}
	n := m.Repo.Names("work")

	for url, want := range map[string]string{
		"http://allowed.test/":          "allowed",
		"http://api.example.test/":      "allowed",
		"http://denied.test:8080/":      "denied",
		"http://denied.test/":           "litterbox: denied.test:80 is not in this sandbox's network allowlist ([network] allow in .litterbox.toml)",
		"http://example.test/":          "litterbox: example.test:80 is not in this sandbox's network allowlist ([network] allow in .litterbox.toml)",
		"http://" + ip["allowed"] + "/": "litterbox: " + ip["allowed"] + ":80 is not in this sandbox's network allowlist ([network] allow in .litterbox.toml)",
	} {
		floor := execFloor(t, m)
		start := time.Now()
		if got := strings.TrimSpace(exec(t, m, "work", viaProxy(url))); got != want {
			t.Errorf("%s: %q, want %q", url, got, want)
		}
		if took := time.Since(start); took > floor+2*time.Second {
			t.Errorf("%s took %v (an exec of true %v)", url, took, floor)
		}
	}
	// A tunnel (what HTTPS uses) to an allowed host, and to a refused one.
	tunnel := `printf 'CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\nGET / HTTP/1.0\r\n\r\n' | nc -w 5 127.0.0.1 3128 | tail -1`
	if got := strings.TrimSpace(exec(t, m, "work", strings.ReplaceAll(tunnel, "%s", "allowed.test:80"))); got != "allowed" {
		t.Errorf("CONNECT allowed.test:80: %q", got)
	}
	if got := exec(t, m, "work", strings.ReplaceAll(tunnel, "%s", "denied.test:80")+"; true"); strings.Contains(got, "denied\n") {
		t.Errorf("CONNECT denied.test:80 got through: %q", got)
	}
	// No route of its own: a direct connection and a lookup fail at once.
	floor := execFloor(t, m)
	start := time.Now()
	direct := exec(t, m, "work", "nc -w 2 "+ip["allowed"]+" 80 </dev/null 2>&1; echo exit=$?; nslookup allowed.test 2>&1 | tail -1; echo lookup=$?")
	if !strings.Contains(direct, "exit=1") || strings.Contains(direct, ip["allowed"]+"\n") {
		t.Errorf("direct: %q", direct)
	}
	if took := time.Since(start); took > floor+2*time.Second {
		t.Errorf("a direct connection and a lookup took %v (an exec of true %v)", took, floor)
	}
	logs, err := testenv.Docker("logs", n.Egress())
	if err != nil || !strings.Contains(logs, `"refused":"denied.test:80"`) || !strings.Contains(logs, `"refused":"example.test:80"`) {
		t.Errorf("the proxy's log of refusals: %q %v", logs, err)
	}
	// The proxy is hardened like the sandbox.
	if got, err := testenv.Docker("inspect", "--format", "{{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.HostConfig.SecurityOpt}} {{.Config.User}}", n.Egress()); err != nil || got != "true [ALL] [no-new-privileges] 1000:1000" {
		t.Errorf("egress proxy: %q %v", got, err)
	}

	state := func() string {
		out, _ := testenv.Docker("inspect", "--format", "{{.State.Status}}", n.Container, n.Egress())
		return strings.Join(strings.Fields(out), " ")
	}
	if _, err := m.Pause(ctx, "work"); err != nil || state() != "paused paused" {
		t.Errorf("pause: %v, %s", err, state())
	}
	if _, err := m.Resume(ctx, "work"); err != nil || state() != "running running" {
		t.Errorf("resume: %v, %s", err, state())
	}
	if got := strings.TrimSpace(exec(t, m, "work", viaProxy("http://allowed.test/"))); got != "allowed" {
		t.Errorf("after resume: %q", got)
	}
	d, err := m.Delete(ctx, "work", true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(d.Removed, ","), "egress proxy "+n.Egress()) {
		t.Errorf("delete removed %v", d.Removed)
	}
	if left, _ := testenv.Docker("ps", "-aq", "--filter", "name="+n.Egress()); left != "" {
		t.Errorf("the egress proxy outlived its sandbox")
	}
	if left, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name="+n.Egress()); left != "" {
		t.Errorf("the egress volume outlived its sandbox: %s", left)
	}
}

// Tools that read HTTP_PROXY work unchanged: Python's urllib (what pip
// uses) on the Debian image with a toolchain.
func TestIntegrationEgressFromPython(t *testing.T) {
	network, _ := testServers(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbeg"))
	testenv.NewRepo(t, dir, testenv.SmallFiles)
	m := imageManager(t, dir, "litterbox-test/python:bookworm")
	m.Repo.Config.Allow, m.Repo.Config.EgressNetwork = []string{"allowed.test"}, network
	if _, err := m.Create(ctx, create.CreateOptions{Name: "work"}); err != nil {
		t.Fatal(err)
	}
	res := bash(t, m, `python3 -c '
import urllib.request, urllib.error
print(urllib.request.urlopen("http://allowed.test/", timeout=5).read().decode().strip())
try:
    urllib.request.urlopen("http://denied.test/", timeout=5)
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode().strip())
'`)
	want := "allowed\n403 litterbox: denied.test:80 is not in this sandbox's network allowlist ([network] allow in .litterbox.toml)\n"
	if res.ExitCode != 0 || res.Stdout != want {
		t.Errorf("python: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// setupNetworkSandbox makes sandbox "work" whose setup command runs fetch
// (a command printing "allowed") into fetched.txt, with cfg's network
// settings on the test servers' network.
func setupNetworkSandbox(t *testing.T, network, fetch string, cfg config.Config) (*Manager, *create.Created) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbsn"))
	testenv.NewRepo(t, dir, testenv.SmallFiles)
	cfg.EgressNetwork = network
	cfg.SetupCommand = fetch + " > fetched.txt"
	m, err := Open(context.Background(), testenv.Exec(), engine.Docker, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	c, err := m.Create(context.Background(), create.CreateOptions{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Setup.ExitCode != 0 || strings.TrimSpace(show(t, m, "fetched.txt")) != "allowed" {
		t.Fatalf("setup: %+v", c.Setup)
	}
	return m, c
}

// direct is a busybox command that asks host's web server for / itself.
func direct(host string) string {
	return `printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 2 ` + host + ` 80 | tail -1`
}

// execFloor is how long an exec of true takes in sandbox work now: what
// a bound on a refusal's speed leaves out, since on a busy machine (CI runs
// the gVisor suites beside these) an exec alone took over 2 s.
func execFloor(t *testing.T, m *Manager) time.Duration {
	t.Helper()
	start := time.Now()
	exec(t, m, "work", "true")
	return time.Since(start)
}

// directBy is how each image asks a web server for / straight, not
// through a proxy: busybox with nc, Debian with curl.
var directBy = map[string]func(host string) string{
	"busybox:latest":    direct,
	testenv.PythonImage: func(host string) string { return "curl -sS --max-time 2 --noproxy '*' http://" + host + "/" },
}

// answered reports whether out holds the allowed server's answer, a line
// of its own (an error naming allowed.test is not one).
func answered(out string) bool { return slices.Contains(strings.Split(out, "\n"), "allowed") }

// setup = "open": the setup command has the network, the agent does not,
// not even after the sandbox is stopped and started again.
func TestMatrixSetupNetworkOpen(t *testing.T) {
	network, ip := testServers(t)
	for _, image := range []string{"busybox:latest", testenv.PythonImage} {
		t.Run(imageName(image), func(t *testing.T) {
			ctx := context.Background()
			fetch := directBy[image]
			cfg := config.Default()
			cfg.Image, cfg.SetupOpen = image, true
			m, c := setupNetworkSandbox(t, network, fetch("allowed.test"), cfg)
			if c.Network != "none" {
				t.Errorf("create reports network %q", c.Network)
			}
			// A connection by address fails at once (no route); one by name
			// fails too, within the client's 2 s: on a network of its own the
			// sandbox asked Docker's resolver, which is gone with the network
			// (on the default bridge the lookup fails at once).
			noRoute := func(when string) {
				floor := execFloor(t, m)
				start := time.Now()
				if out := exec(t, m, "work", fetch(ip["allowed"])+" 2>&1; true"); answered(out) {
					t.Errorf("%s: the agent reached %s: %q", when, ip["allowed"], out)
				}
				if took := time.Since(start); took > floor+2*time.Second {
					t.Errorf("%s: failing took %v (an exec of true %v)", when, took, floor)
				}
				if out := exec(t, m, "work", fetch("allowed.test")+" 2>&1; true"); answered(out) {
					t.Errorf("%s: the agent reached allowed.test: %q", when, out)
				}
			}
			noRoute("after setup")
			n := m.Repo.Names("work")
			if _, err := testenv.Docker("stop", "-t", "1", n.Container); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Resume(ctx, "work"); err != nil {
				t.Fatal(err)
			}
			noRoute("after a restart")
		})
	}
}

// setup = [hosts]: the setup command reaches its own allowlist through the
// proxy; afterwards the sandbox has its own allowlist only, or with mode
// "none" no proxy at all.
func TestIntegrationSetupAllowlist(t *testing.T) {
	network, _ := testServers(t)
	ctx := context.Background()
	cfg := config.Default()
	cfg.Allow, cfg.SetupAllow = []string{"allowed.test"}, []string{"api.example.test"}
	m, _ := setupNetworkSandbox(t, network, viaProxy("http://api.example.test/"), cfg)
	refused := "litterbox: api.example.test:80 is not in this sandbox's network allowlist ([network] allow in .litterbox.toml)"
	if got := strings.TrimSpace(exec(t, m, "work", viaProxy("http://api.example.test/"))); got != refused {
		t.Errorf("after setup, api.example.test: %q", got)
	}
	if got := strings.TrimSpace(exec(t, m, "work", viaProxy("http://allowed.test/"))); got != "allowed" {
		t.Errorf("after setup, allowed.test: %q", got)
	}
	list, err := m.List(ctx, false)
	if err != nil || len(list) != 1 || list[0].Refused["api.example.test:80"] != 1 || len(list[0].Allow) != 1 {
		t.Errorf("list: %+v %v", list, err)
	}

	cfg = config.Default()
	cfg.SetupAllow = []string{"allowed.test"}
	m, c := setupNetworkSandbox(t, network, viaProxy("http://allowed.test/"), cfg)
	if c.Network != "none" {
		t.Errorf("create reports network %q", c.Network)
	}
	n := m.Repo.Names("work")
	if out, _ := testenv.Docker("ps", "-aq", "--filter", "name="+n.Egress()); out != "" {
		t.Errorf("the setup's proxy outlived the setup")
	}
	if out := exec(t, m, "work", viaProxy("http://allowed.test/")+"; true"); strings.Contains(out, "allowed") {
		t.Errorf("after setup: %q", out)
	}
	if _, err := m.Delete(ctx, "work", true); err != nil {
		t.Fatal(err)
	}
	if left, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name="+n.Egress()); left != "" {
		t.Errorf("the egress volume outlived its sandbox: %s", left)
	}
}

// curl and wget, as a Debian image has them, go through the proxy
// unchanged: HTTP, and HTTPS with the certificate checked end to end (the
// proxy only tunnels); a refused host, HTTP or HTTPS, and a direct
// connection fail within 2 s with a message naming the host.
func TestIntegrationEgressCurlWget(t *testing.T) {
	network, ip := testServers(t)
	cert := testenv.TLSServer(t, network, "secure.test", map[string][]byte{"index.html": []byte("secure\n")})
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbeg"))
	testenv.NewRepo(t, dir, testenv.SmallFiles)
	m := imageManager(t, dir, testenv.PythonImage)
	m.Repo.Config.Allow, m.Repo.Config.EgressNetwork = []string{"allowed.test", "secure.test:443"}, network
	if _, err := m.Create(ctx, create.CreateOptions{Name: "work"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Agent.Write(ctx, "work", "/tmp/ca.pem", cert); err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]string{
		"curl -sS http://allowed.test/":                                 "allowed\n",
		"wget -q -O- http://allowed.test/":                              "allowed\n",
		"curl -sS --cacert /tmp/ca.pem https://secure.test/":            "secure\n",
		"wget -q -O- --ca-certificate=/tmp/ca.pem https://secure.test/": "secure\n",
	} {
		if res := bash(t, m, cmd); res.ExitCode != 0 || res.Stdout != want {
			t.Errorf("%s: exit %d, %q %q", cmd, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	for cmd, want := range map[string]string{
		"curl -sS -f http://denied.test/":                      "403",
		"curl -sS https://denied.test/":                        "CONNECT tunnel failed, response 403",
		"wget -q -O- http://denied.test/":                      "",
		"curl -sS --noproxy '*' http://" + ip["allowed"] + "/": "",
		"curl -sS --noproxy '*' http://allowed.test/":          "",
	} {
		floor := execFloor(t, m)
		start := time.Now()
		res := bash(t, m, cmd)
		if res.ExitCode == 0 || !strings.Contains(res.Stderr, want) {
			t.Errorf("%s: exit %d, %q", cmd, res.ExitCode, res.Stderr)
		}
		if took := time.Since(start); took > floor+2*time.Second {
			t.Errorf("%s took %v (an exec of true %v)", cmd, took, floor)
		}
	}
}

// A create whose proxy fails at any step, or whose setup network cannot be
// taken away, fails and leaves nothing: no container, proxy, volume,
// branch or state.
func TestIntegrationEgressCreateFailuresLeaveNothing(t *testing.T) {
	New := func(t *testing.T, r runner.Runner) *Manager {
		m := realManager(t)
		m.Repo.Config.Allow, m.Repo.Config.SetupAllow, m.Repo.Config.SetupOpen = []string{"allowed.test"}, []string{"api.example.test"}, false
		useRunner(m, r)
		return m
	}
	counter := &runner.Counter{Inner: testenv.Exec()}
	if _, err := New(t, counter).Create(context.Background(), create.CreateOptions{Name: "probe"}); err != nil {
		t.Fatal(err)
	}
	var egressSteps []string
	for _, argv := range counter.Commands() {
		if line := runner.Join(argv); strings.Contains(line, ".egress") {
			egressSteps = append(egressSteps, line)
		}
	}
	if len(egressSteps) < 6 { // volume, create, cp, start; rm, create, cp, start after setup
		t.Fatalf("egress steps: %q", egressSteps)
	}
	check := func(t *testing.T, m *Manager, fault *runner.Fault) {
		_, err := m.Create(context.Background(), create.CreateOptions{Name: "victim"})
		if !fault.Fired() || err == nil || !strings.Contains(err.Error(), "injected fault") {
			t.Fatalf("fired %v, create: %v", fault.Fired(), err)
		}
		left := leftovers(t, m, "victim")
		if out, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name="+m.Repo.Names("victim").Egress()); out != "" {
			left = append(left, "volume "+out)
		}
		if len(left) > 0 {
			t.Errorf("left %v; the create said: %v", left, err)
		}
	}
	for i, step := range egressSteps {
		t.Run(fmt.Sprintf("%d-%s", i+1, strings.Fields(step)[1]), func(t *testing.T) {
			fault := &runner.Fault{Inner: testenv.Exec(), Match: ".egress", N: i + 1, Stderr: "Error response from daemon: injected fault"}
			check(t, New(t, fault), fault)
		})
	}
	t.Run("network-disconnect", func(t *testing.T) {
		fault := &runner.Fault{Inner: testenv.Exec(), Match: "network disconnect", N: 1, Stderr: "Error response from daemon: injected fault"}
		m := realManager(t)
		m.Repo.Config.SetupOpen = true
		useRunner(m, fault)
		check(t, m, fault)
	})
}

// A delete that lost the sandbox's record still removes its proxy and the
// proxy's volume, having checked they are this repository's.
func TestIntegrationEgressDeleteWithoutRecord(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	m.Repo.Config.Allow = []string{"allowed.test"}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "work"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(m.Repo.Layout().Record("work")); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Delete(ctx, "work", true); err != nil {
		t.Fatal(err)
	}
	n := m.Repo.Names("work")
	if left, _ := testenv.Docker("ps", "-aq", "--filter", "name="+n.Egress()); left != "" {
		t.Errorf("the egress proxy outlived its sandbox")
	}
	if left, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name="+n.Egress()); left != "" {
		t.Errorf("the egress volume outlived its sandbox: %s", left)
	}
}

// A sandbox whose repository is gone is deleted with its proxy.
func TestIntegrationEgressDeleteOrphan(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	m.Repo.Config.Allow = []string{"allowed.test"}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "work"}); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(m.Repo.Root, m.Repo.Root+".moved"); err != nil {
		t.Fatal(err)
	}
	d, err := DeleteOrphan(ctx, testenv.Exec(), engine.Docker, m.Repo.RepoPath, "work", true)
	if err != nil {
		t.Fatal(err)
	}
	n := m.Repo.Names("work")
	if !strings.Contains(strings.Join(d.Removed, ","), "egress proxy "+n.Egress()) {
		t.Errorf("removed %v", d.Removed)
	}
	if left, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name="+n.Egress()); left != "" {
		t.Errorf("the egress volume outlived its sandbox: %s", left)
	}
}
