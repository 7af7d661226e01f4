//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/services"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// bash with background starts a server that outlives the call, reached
// from the host through a configured port; sandbox-service controls it
// like a configured service, list names it, a second start of the same
// program gets a name of its own, and what it writes is committed by the
// next call.
func TestMatrixBackgroundServer(t *testing.T) {
	for _, tc := range []struct{ image, server, name string }{
		{"busybox:latest", "httpd -f -p %d -h /src", "httpd"},
		{testenv.PythonImage, "python3 -m http.server %d -d /src", "python3"},
	} {
		t.Run(imageName(tc.image), func(t *testing.T) { backgroundServer(t, tc.image, tc.server, tc.name) })
	}
}

// backgroundServer runs the test with image, whose server listens on the
// port in its format and is named after its program name.
func backgroundServer(t *testing.T, image, server, name string) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbbg"))
	testenv.NewRepo(t, dir, testenv.Files{"index.html": "from the sandbox\n"})
	m := imageManager(t, dir, image)
	m.Repo.Config.Network = "bridge"
	m.Repo.Config.Ports = []config.PortSpec{{Name: "www", Target: 8080}}
	m.Repo.Config.Services = map[string]config.ServiceSpec{"web": {Command: []string{"sleep", "600"}, Stop: "TERM", StopTimeout: 2}}
	c, err := m.Create(ctx, create.CreateOptions{Name: "work"})
	if m.Repo.Config.Isolation == config.IsolationGVisor {
		// runsc runs with --network=none here (scripts/gvisor.sh): ports
		// are refused in one line, before anything is made.
		if err == nil || !strings.Contains(err.Error(), `published ports) under isolation "gvisor"`) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("ports under gVisor without its network: %v", err)
		}
		assertNothingMade(t, m, "work")
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	st, err := servicectl.Background(ctx, m.Repo, "work", "", agent.BashOptions{Command: fmt.Sprintf(server, 8080)})
	if err != nil || st.Name != name || st.State != services.Running || st.PID == 0 {
		t.Fatalf("background: %+v %v", st, err)
	}
	var body string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get("http://" + c.Ports[0].Address + "/"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if body = string(b); body != "" {
				break
			}
		}
	}
	if body != "from the sandbox\n" {
		t.Fatalf("the background server answered %q", body)
	}
	// A later call does not end it.
	bash(t, m, "true")
	if states, err := servicectl.Control(ctx, m.Repo, "work", services.Status, name); err != nil || states[0].State != services.Running {
		t.Errorf("status after a call: %+v %v", states, err)
	}
	list, err := m.List(ctx, false)
	if err != nil || len(list) != 1 || !slices.Equal(list[0].Background, []string{name}) {
		t.Errorf("list: %+v %v", list, err)
	}
	// The same program again, while the first runs: a name of its own.
	st2, err := servicectl.Background(ctx, m.Repo, "work", "", agent.BashOptions{Command: fmt.Sprintf(server, 8081)})
	if err != nil || st2.Name != name+"-2" {
		t.Errorf("second: %+v %v", st2, err)
	}
	if states, err := servicectl.Control(ctx, m.Repo, "work", services.Stop, name); err != nil || states[0].State == services.Running {
		t.Errorf("stop: %+v %v", states, err)
	}
	// Stopped, its name is free again.
	if st, err := servicectl.Background(ctx, m.Repo, "work", "", agent.BashOptions{Command: fmt.Sprintf(server, 8080)}); err != nil || st.Name != name {
		t.Errorf("restart by name: %+v %v", st, err)
	}

	// What a background command writes is committed by the next call,
	// first, as a snapshot of its own.
	if _, err := servicectl.Background(ctx, m.Repo, "work", "writer", agent.BashOptions{Command: "sleep 1; echo later > later.txt; sleep 600", Workdir: "/src"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if res := bash(t, m, "true"); res.Between.Commit == "" || res.Snapshot != "" || !strings.Contains(tree(t, m), "later.txt") {
		t.Errorf("the background command's file is not committed: %+v", res)
	}
	var logs strings.Builder
	if err := servicectl.Logs(ctx, m.Repo, "work", name, 0, false, &logs); err != nil || !strings.Contains(logs.String(), "starting "+name) {
		t.Errorf("logs: %q %v", logs.String(), err)
	}
	// A configured service's name is not the agent's to take.
	if _, err := servicectl.Background(ctx, m.Repo, "work", "web", agent.BashOptions{Command: "true"}); err == nil || !strings.Contains(err.Error(), `service "web" is configured`) {
		t.Errorf("a configured name: %v", err)
	}
	if _, err := servicectl.Background(ctx, m.Repo, "work", "bad name!", agent.BashOptions{Command: "true"}); err == nil {
		t.Error("a bad name was taken")
	}
}
