//go:build integration

package sandbox

import (
	"context"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// Under gVisor (runsc registered with the engine, scripts/gvisor.sh): the
// setup cache keeps and restores a setup's work, fork copies it, the
// egress proxy serves its allowlist and refuses the rest, list and the
// record say the level, and what this runsc cannot do is refused in one
// line before anything is made.
func TestIntegrationGVisor(t *testing.T) {
	ctx := context.Background()
	network, _ := testServers(t)
	m := repoManager(t, testenv.Files{
		"README.md":  "hi\n",
		".gitignore": "node_modules/\n",
		".litterbox.toml": "[docker]\nisolation = \"gvisor\"\nsetup-command = '" + homeSetup + " && mkdir -p node_modules && cp $HOME/deps/lib node_modules/lib'\n" +
			"[setup]\nkeep = [\"/opt/deps\"]\n",
	}, "[network]\nmode = \"allow\"\nallow = [\"allowed.test\"]\negress = \""+network+"\"\n")
	first, err := m.Create(ctx, create.CreateOptions{Name: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if first.Isolation != config.IsolationGVisor || first.SetupCache == nil || !first.SetupCache.Saved {
		t.Fatalf("first: isolation %q, cache %+v, setup %+v, warnings %v", first.Isolation, first.SetupCache, first.Setup, first.Warnings)
	}
	stamp := exec(t, m, "first", "cat $HOME/deps/lib")
	second, err := m.Create(ctx, create.CreateOptions{Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if sc := second.SetupCache; sc == nil || !sc.Hit {
		t.Fatalf("second missed the cache: %+v", sc)
	}
	if got := exec(t, m, "second", "uname -r; cat $HOME/deps/lib /opt/deps/lib node_modules/lib"); got != "4.4.0\n"+stamp+stamp+stamp {
		t.Fatalf("second holds %q", got)
	}
	if _, err := m.Agent.Write(ctx, "second", "work.txt", []byte("agent\n")); err != nil {
		t.Fatal(err)
	}
	fork, err := m.Creator.Fork(ctx, create.ForkOptions{Source: "second", Name: "copy"})
	if err != nil {
		t.Fatal(err)
	}
	if got := exec(t, m, "copy", "uname -r; cat work.txt $HOME/deps/lib node_modules/lib"); fork.Isolation != config.IsolationGVisor || got != "4.4.0\nagent\n"+stamp+stamp {
		t.Fatalf("fork (isolation %q) holds %q", fork.Isolation, got)
	}
	if got := exec(t, m, "copy", viaProxy("http://allowed.test/")); strings.TrimSpace(got) != "allowed" {
		t.Fatalf("through the proxy: %q", got)
	}
	if res, err := m.Agent.Bash(ctx, "copy", agent.BashOptions{Command: "wget -q -O- http://denied.test/ 2>&1"}); err != nil || res.ExitCode == 0 || !strings.Contains(res.Stdout, "403") {
		t.Fatalf("a refused host: %+v %v", res, err)
	}
	list, err := m.List(ctx, false)
	if err != nil || len(list) != 3 || list[0].Isolation != config.IsolationGVisor {
		t.Fatalf("list: %+v %v", list, err)
	}

	// What this runsc (--network=none) cannot give: one line, nothing made.
	writeFile(t, m.Repo.Root+"/.litterbox.local.toml", "[network]\nmode = \"open\"\n")
	if _, err := m.Create(ctx, create.CreateOptions{Name: "open"}); err == nil || !strings.Contains(err.Error(), `under isolation "gvisor"`) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("network open under gVisor: %v", err)
	}
	refusedCleanly(t, m, "open")
	writeFile(t, m.Repo.Root+"/.litterbox.local.toml", "[docker]\ngvisor-runtime = \"nope\"\n")
	if _, err := m.Create(ctx, create.CreateOptions{Name: "nope"}); err == nil || !strings.Contains(err.Error(), `no runtime "nope"`) {
		t.Fatalf("an unknown runtime: %v", err)
	}
	refusedCleanly(t, m, "nope")
}

// refusedCleanly checks that a refused create of slug made nothing, beside
// the sandboxes that exist.
func refusedCleanly(t *testing.T, m *Manager, slug string) {
	t.Helper()
	n := m.Repo.Names(slug)
	if out, _ := testenv.Docker("ps", "-aq", "--filter", "name=^"+n.Container+"$"); out != "" {
		t.Errorf("refused create of %s left container %s", slug, out)
	}
	if vols := volumesOf(t, m, slug); len(vols) > 0 {
		t.Errorf("refused create of %s left volumes %q", slug, vols)
	}
	if out := testenv.Git(t, m.Repo.Root, "for-each-ref", n.Ref); out != "" {
		t.Errorf("refused create of %s left %s", slug, out)
	}
}
