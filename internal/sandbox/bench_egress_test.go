//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// BenchmarkCreateAllow is BenchmarkCreate with network mode "allow": what
// the egress proxy (its volume, container and start) adds to a create.
func BenchmarkCreateAllow(b *testing.B) {
	m := benchManager(b)
	m.Repo.Config.Allow = []string{"proxy.golang.org"}
	benchCreates(b, m)
}

// The same 10 MB HTTPS download with curl, through the egress proxy of a
// sandbox with an allowlist, and (Raw) straight from a sandbox on the
// server's network: what the proxy costs a real transfer.
func BenchmarkDownload10MB(b *testing.B)    { benchDownload(b, true) }
func BenchmarkRawDownload10MB(b *testing.B) { benchDownload(b, false) }

func benchDownload(b *testing.B, viaProxy bool) {
	network := testenv.UniqueName("lbbnet")
	docker(b, "network", "create", network)
	b.Cleanup(func() { testenv.Docker("network", "rm", network) })
	payload := bytes.Repeat([]byte("litterbox\n"), 1<<20)
	cert := testenv.TLSServer(b, network, "files.test", map[string][]byte{"10mb.bin": payload})
	dir := b.TempDir() + "/" + testenv.UniqueName("lbbench")
	testenv.NewRepo(b, dir, testenv.SmallFiles)
	m := imageManager(b, dir, testenv.PythonImage)
	if viaProxy {
		m.Repo.Config.Allow, m.Repo.Config.EgressNetwork = []string{"files.test:443"}, network
	} else {
		m.Repo.Config.Network = network
	}
	ctx := context.Background()
	if _, err := m.Create(ctx, create.CreateOptions{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	if _, err := m.Agent.Write(ctx, "bench", "/tmp/ca.pem", cert); err != nil {
		b.Fatal(err)
	}
	container := m.Repo.Names("bench").Container
	for b.Loop() {
		out, err := testenv.Docker("exec", container, "curl", "-sS", "--cacert", "/tmp/ca.pem", "-o", "/dev/null", "-w", "%{size_download}", "https://files.test/10mb.bin")
		if err != nil || out != fmt.Sprint(len(payload)) {
			b.Fatalf("download: %q %v", out, err)
		}
	}
}

// One HTTPS request with curl through the egress proxy to a host that
// receives an injected secret (the proxy ends TLS, puts the value in the
// header and makes its own TLS connection upstream), and (Raw) the same
// request to a host the proxy only tunnels to (CONNECT, TLS end to end):
// what injection costs a request.
func BenchmarkInjectedHTTPS(b *testing.B)    { benchInjected(b, "api.test") }
func BenchmarkRawInjectedHTTPS(b *testing.B) { benchInjected(b, "tunnel.test") }

func benchInjected(b *testing.B, host string) {
	network := testenv.UniqueName("lbbinj")
	docker(b, "network", "create", network)
	b.Cleanup(func() { testenv.Docker("network", "rm", network) })
	key := "sk-bench-" + testenv.UniqueName("key")
	apiCert, _ := testenv.APIServer(b, network, "api.test", key)
	tunnelCert, _ := testenv.APIServer(b, network, "tunnel.test", key)
	roots := b.TempDir() + "/roots.pem"
	if err := os.WriteFile(roots, apiCert, 0o644); err != nil {
		b.Fatal(err)
	}
	b.Setenv(egressproxy.TestRootsEnv, roots)
	b.Setenv("LB_BENCH_API_KEY", key)
	dir := b.TempDir() + "/" + testenv.UniqueName("lbbench")
	testenv.NewRepo(b, dir, testenv.SmallFiles)
	m := imageManager(b, dir, testenv.PythonImage)
	m.Repo.Config.Allow, m.Repo.Config.EgressNetwork = []string{"api.test:443", "tunnel.test:443"}, network
	m.Repo.Config.Secrets = map[string]config.SecretSpec{"API_KEY": {Env: "LB_BENCH_API_KEY", Inject: []string{"api.test"}}}
	ctx := context.Background()
	if _, err := m.Create(ctx, create.CreateOptions{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	if _, err := m.Agent.Write(ctx, "bench", "/tmp/tunnel.pem", tunnelCert); err != nil {
		b.Fatal(err)
	}
	rec, err := m.Repo.Store().Load("bench")
	if err != nil || rec.Injection == nil {
		b.Fatalf("no injection: %v", err)
	}
	args := []string{"exec", m.Repo.Names("bench").Container, "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
		"-H", "Authorization: Bearer " + rec.Injection.Placeholders["API_KEY"]}
	want := "200" // the tunnelled host gets the placeholder: 401
	if host == "tunnel.test" {
		args, want = append(args, "--cacert", "/tmp/tunnel.pem"), "401"
	}
	args = append(args, "-X", "POST", "https://"+host+"/v1/messages")
	for b.Loop() {
		if out, err := testenv.Docker(args...); err != nil || out != want {
			b.Fatalf("request to %s: %q %v", host, out, err)
		}
	}
}
