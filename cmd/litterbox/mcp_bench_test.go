//go:build integration

package main

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	gomcp "github.com/mark3labs/mcp-go/mcp"

	"github.com/litterbox-dev/litterbox/internal/mcpproc"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// BenchmarkMCPStartup measures `litterbox mcp` from process start to an
// answered initialize and tools/list, the wait an agent client sees, and
// reports the server's resident memory once it has been idle for a second.
func BenchmarkMCPStartup(b *testing.B) {
	ctx := context.Background()
	bin := builtBinary(b)
	repo := filepath.Join(b.TempDir(), testenv.UniqueName("lbbench"))
	testenv.NewRepo(b, repo, testenv.SmallFiles)
	var rss int64
	for b.Loop() {
		srv, c := startMCP(ctx, b, bin, repo)
		b.StopTimer()
		time.Sleep(time.Second)
		r, err := srv.RSS()
		if err != nil {
			b.Fatal(err)
		}
		rss = max(rss, r)
		_ = c.Close()
		if err := srv.Stop(10 * time.Second); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(rss)/(1<<20), "idle-RSS-MiB")
}

func startMCP(ctx context.Context, b *testing.B, bin, repo string) (*mcpproc.Server, *client.Client) {
	b.Helper()
	srv, err := mcpproc.Start(bin, []string{"mcp", "--repo", repo}, nil)
	if err != nil {
		b.Fatal(err)
	}
	c, err := mcpproc.Connect(ctx, srv, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.ListTools(ctx, gomcp.ListToolsRequest{}); err != nil {
		b.Fatal(err)
	}
	return srv, c
}
