//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// BenchmarkCreateAllow is BenchmarkCreate with network mode "allow": what
// the egress proxy (its volume, container and start) adds to a create.
func BenchmarkCreateAllow(b *testing.B) {
	m := benchManager(b)
	m.Config.Allow = []string{"proxy.golang.org"}
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
		m.Config.Allow, m.Config.EgressNetwork = []string{"files.test:443"}, network
	} else {
		m.Config.Network = network
	}
	ctx := context.Background()
	if _, err := m.Create(ctx, CreateOptions{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	if _, err := m.Write(ctx, "bench", "/tmp/ca.pem", cert); err != nil {
		b.Fatal(err)
	}
	container := m.Names("bench").Container
	for b.Loop() {
		out, err := testenv.Docker("exec", container, "curl", "-sS", "--cacert", "/tmp/ca.pem", "-o", "/dev/null", "-w", "%{size_download}", "https://files.test/10mb.bin")
		if err != nil || out != fmt.Sprint(len(payload)) {
			b.Fatalf("download: %q %v", out, err)
		}
	}
}
