//go:build integration

package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// injectAttack is the attack table's row on injected secrets, in a
// sandbox of base: the stand-in agent inside calls the stand-in API
// with the key from its environment, and the API receives the real key,
// which the sandbox never holds (no process's environment, no file,
// neither container's inspect, nor the proxy's processes). The body
// reaches the API as written, placeholder and all; the placeholder sent to
// another allowed host is refused and counted.
func injectAttack(t *testing.T, base string) {
	network := testenv.UniqueName("lbinj")
	if _, err := testenv.Docker("network", "create", network); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.Docker("network", "rm", network) })
	var rnd [16]byte
	_, _ = rand.Read(rnd[:])
	key := "sk-test-" + hex.EncodeToString(rnd[:])
	cert, api := testenv.APIServer(t, network, "api.test", key)
	testenv.HTTPServer(t, network, "other.test", map[string][]byte{"index.html": []byte("other\n")})
	roots := filepath.Join(t.TempDir(), "roots.pem")
	writeFile(t, roots, string(cert))
	t.Setenv(egressproxy.TestRootsEnv, roots)
	t.Setenv("LB_TEST_API_KEY", key)
	img := standinImage(t, base)
	m := repoManager(t, testenv.Files{"README.md": "hi\n"}, `[docker]
image = "`+img+`"
[network]
mode = "allow"
allow = ["api.test:443", "other.test:80"]
egress = "`+network+`"
[secrets]
API_KEY = { env = "LB_TEST_API_KEY", inject = ["api.test"] }
`)
	ctx := context.Background()
	if _, err := m.Create(ctx, create.CreateOptions{Name: "w"}); err != nil {
		t.Fatal(err)
	}
	agentSays := func(url string, flags ...string) string {
		t.Helper()
		var out strings.Builder
		res, err := m.Agent.Run(ctx, "w", agent.RunOptions{ExecOptions: agent.ExecOptions{
			Cmd: append([]string{"standin", "-steps", "0", "-api", url, "-key-env", "API_KEY"}, flags...), Interactive: true, Secrets: true,
			Streams: box.Streams{Stdin: strings.NewReader("call\n"), Stdout: &out, Stderr: &out}}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("run: %+v %v\n%s", res, err, out.String())
		}
		return out.String()
	}
	said := agentSays("https://api.test/v1/messages")
	if !strings.Contains(said, `standin: api 200: {"authorized": true, "body": "{\"prompt\":\"hello\",\"pasted_key\":\"litterbox-placeholder-API_KEY-`) {
		t.Errorf("the agent's call to its API: %s", said)
	}
	if log, _ := testenv.Docker("logs", api); !strings.Contains(log, `"authorized": true`) || strings.Contains(log, key) {
		t.Errorf("the API's log: %s", log)
	}
	said = agentSays("http://other.test/")
	if !strings.Contains(said, "standin: api 403: litterbox: refused: the request holds the placeholder of secret API_KEY, which other.test may not receive") {
		t.Errorf("the placeholder to another host: %s", said)
	}
	// The key follows the name that was checked, not the Host header: a
	// front end that routes on Host would hand it to another site.
	said = agentSays("https://api.test/v1/messages", "-host", "evil.test")
	if !strings.Contains(said, `standin: api 421: litterbox: refused: the request's Host header names "evil.test", but its connection was opened to api.test:443`) {
		t.Errorf("the key sent to api.test with Host: evil.test: %s", said)
	}
	// The value goes in Authorization alone: an API that quotes another
	// header back shows the agent the placeholder.
	said = agentSays("https://api.test/v1/messages", "-echo")
	if !strings.Contains(said, `standin: api 200: {"authorized": true`) || !strings.Contains(said, `"echo": "litterbox-placeholder-API_KEY-`) || strings.Contains(said, key) {
		t.Errorf("the key in X-Echo, quoted back: %s", said)
	}
	if log, _ := testenv.Docker("logs", api); strings.Contains(log, `"host": "evil.test"`) || strings.Contains(log, `"key_elsewhere": true`) || !strings.Contains(log, `"key_elsewhere": false`) {
		t.Errorf("the API's log: %s", log)
	}
	if a, err := m.Proxies().ActivityOf(ctx, "w", time.Time{}); err != nil || a.Refused["other.test"] != 1 || a.Refused["api.test"] != 1 || a.Injected["API_KEY@api.test"] != 2 {
		t.Errorf("the proxy's refusals and injections, counted: %+v %v", a, err)
	}
	// The value is nowhere the sandbox reaches, nor in what the
	// engine shows of either container.
	n := m.Repo.Names("w")
	where := map[string]string{}
	where["environments of the sandbox's processes"], _ = testenv.Docker("exec", n.Container, "sh", "-c", "cat /proc/[0-9]*/environ")
	where["its files"], _ = testenv.Docker("exec", n.Container, "tar", "-cf", "-", "/src", "/home", "/tmp", "/run/litterbox")
	where["docker inspect of the sandbox"], _ = testenv.Docker("inspect", n.Container)
	where["docker inspect of the proxy"], _ = testenv.Docker("inspect", n.Egress())
	where["the proxy's environments and command lines"], _ = testenv.Docker("exec", n.Egress(), "sh", "-c", "cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline")
	where["the proxy's log"], _ = testenv.Docker("logs", n.Egress())
	for what, text := range where {
		if text == "" {
			t.Errorf("%s: nothing read", what)
		}
		if strings.Contains(text, key) {
			t.Errorf("the secret's value is in %s", what)
		}
	}
	if !strings.Contains(where["the proxy's log"], `"injected":"API_KEY","host":"api.test"`) {
		t.Errorf("the proxy's log does not say the secret was used: %s", where["the proxy's log"])
	}
	if !strings.Contains(where["docker inspect of the sandbox"], "SSL_CERT_FILE=/run/litterbox/ca-bundle.pem") {
		t.Errorf("the sandbox does not trust its CA")
	}
	// Stopped and started again, the proxy has lost what it held:
	// resume gives it the secrets again.
	for _, c := range []string{n.Container, n.Egress()} {
		if _, err := testenv.Docker("stop", "-t", "1", c); err != nil {
			t.Fatal(err)
		}
	}
	if o, err := m.Resume(ctx, "w"); err != nil || o.Status != create.StatusActive {
		t.Fatalf("resume: %+v %v", o, err)
	}
	if said := agentSays("https://api.test/v1/messages"); !strings.Contains(said, `standin: api 200: {"authorized": true`) {
		t.Errorf("the agent's call after a stop and a resume: %s", said)
	}
	// The proxy's control socket is not the sandbox's to reach: it
	// is in the proxy's network namespace.
	argv := append([]string{"exec", n.Container}, m.Agent.Helper.Argv(protocol.CmdInject{Control: protocol.EgressControl})...)
	if _, err := testenv.Docker(argv...); err == nil || !strings.Contains(err.Error(), "the egress proxy does not take secrets") {
		t.Errorf("the sandbox reached the proxy's control socket: %v", err)
	}
}
