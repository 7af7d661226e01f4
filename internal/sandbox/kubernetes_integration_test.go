//go:build integration

package sandbox

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// kubeProvider is the test cluster (scripts/k8s/with-cluster.sh), which
// must be up: a missing cluster fails the test.
func kubeProvider(t *testing.T) testenv.Provider {
	t.Helper()
	t.Setenv("LITTERBOX_PROVIDERS", "kubernetes")
	return testenv.Providers(t)[0]
}

// kubeManager is a Manager on the test cluster for a new repository whose
// sandboxes run image.
func kubeManager(t *testing.T, p testenv.Provider, image string) *Manager {
	t.Helper()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbk8s"))
	testenv.NewRepo(t, dir, testenv.SmallFiles)
	cfg := config.Default()
	cfg.Image = image
	m, err := Open(context.Background(), testenv.Exec(), engine.Runtime{Bin: p.Bin, Global: p.Global, Kubernetes: true}, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.RemoveAll(m.Repo.Root, m.Repo.RepoSlug) })
	return m
}

// TestIntegrationKubernetesImages runs the change loop, a stop and a start
// on every image with a shell, on the cluster: files written by the agent
// and by a command become commits, and the claim keeps /src (ignored files
// too) across the pod being deleted and made again.
func TestIntegrationKubernetesImages(t *testing.T) {
	p := kubeProvider(t)
	for _, image := range shellImages {
		t.Run(imageName(image), func(t *testing.T) {
			ctx := context.Background()
			m := kubeManager(t, p, image)
			c, err := m.Create(ctx, create.CreateOptions{Name: "work"})
			if err != nil {
				t.Fatal(err)
			}
			if c.Status != create.StatusActive || !strings.Contains(c.Storage, "PersistentVolumeClaim") {
				t.Fatalf("create: %+v", c)
			}
			res, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "id -u; printf x > made.txt; mkdir -p node_modules && echo dep > node_modules/d; echo $HOME; echo home > $HOME/h"})
			if err != nil || res.ExitCode != 0 || res.Stdout != "1000\n/home/litterbox\n" || res.Snapshot == "" {
				t.Fatalf("bash: %+v %v", res, err)
			}
			if got := testenv.Git(t, m.Repo.Root, "show", "litterbox/work:made.txt"); got != "x" {
				t.Fatalf("made.txt on the branch: %q", got)
			}
			if _, err := m.Agent.Write(ctx, "work", "w.txt", []byte("written\n")); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Pause(ctx, "work"); err != nil {
				t.Fatal(err)
			}
			if in, err := m.Repo.Provider.Inspect(ctx, c.Container); err != nil || in.State != "exited" {
				t.Fatalf("after pause: %+v %v", in, err)
			}
			if _, err := m.Resume(ctx, "work"); err != nil {
				t.Fatal(err)
			}
			// The home is a claim of its own, which outlives the pod too.
			res, err = m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "cat made.txt w.txt node_modules/d $HOME/h"})
			if err != nil || res.Stdout != "xwritten\ndep\nhome\n" {
				t.Fatalf("after resume: %+v %v", res, err)
			}
			if _, err := m.Delete(ctx, "work", true); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Repo.Provider.Inspect(ctx, c.Container); !errors.Is(err, box.ErrNotFound) {
				t.Fatalf("after delete: %v", err)
			}
			if v := p.Volumes(); strings.Contains(v, c.Container) {
				t.Fatalf("claim left: %s", v)
			}
		})
	}
}

// TestIntegrationKubernetesRefusals: what the cluster cannot do is one
// clear error, and leaves nothing behind.
func TestIntegrationKubernetesRefusals(t *testing.T) {
	p := kubeProvider(t)
	ctx := context.Background()

	m := kubeManager(t, p, noShellImage)
	_, err := m.Create(ctx, create.CreateOptions{Name: "noshell"})
	if err == nil || !strings.Contains(err.Error(), "has no /bin/sh") {
		t.Fatalf("no shell: %v", err)
	}
	if _, ierr := m.Repo.Provider.Inspect(ctx, m.Repo.Names("noshell").Container); !errors.Is(ierr, box.ErrNotFound) {
		t.Fatalf("left after a failed create: %v", ierr)
	}

	m = kubeManager(t, p, "busybox:latest")
	m.Repo.Config.Allow = []string{"*.example.com"}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "wild"}); !errors.Is(err, box.ErrUnsupported) {
		t.Fatalf("a wildcard allow entry: %v", err)
	}
	m.Repo.Config.Allow, m.Repo.Config.SetupAllow = []string{"localhost:8080"}, []string{"proxy.golang.org"}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "setupnet"}); !errors.Is(err, box.ErrUnsupported) {
		t.Fatalf("a setup network: %v", err)
	}
	m.Repo.Config = config.Default()
	m.Repo.Config.User = "0:0"
	if _, err := m.Create(ctx, create.CreateOptions{Name: "root"}); err == nil || !strings.Contains(err.Error(), "non-root") {
		t.Fatalf("root: %v", err)
	}
	if out := p.Volumes(); strings.Contains(out, "litterbox-"+m.Repo.RepoSlug) {
		t.Fatalf("claims left: %s", out)
	}

	// The setup cache is said not to be used, and nothing is made for it.
	m.Repo.Config = config.Default()
	m.Repo.Config.SetupCommand, m.Repo.Config.SetupCache = "echo made > made.txt", true
	c, err := m.Create(ctx, create.CreateOptions{Name: "cached"})
	if err != nil {
		t.Fatal(err)
	}
	if c.SetupCache != nil || !slices.ContainsFunc(c.Warnings, func(w string) bool {
		return strings.Contains(w, "setup cache not used: not supported on the kubernetes runtime")
	}) {
		t.Fatalf("setup cache on a cluster: %+v", c)
	}
	if out := p.Volumes(); strings.Contains(out, ".cache-") {
		t.Fatalf("a cache claim: %s", out)
	}
}

// TestIntegrationKubernetesAllow: network "allow" is the pod's
// NetworkPolicy, egress only to the addresses the names had at create, and
// those names in the pod's /etc/hosts, so it needs no DNS. (The test
// cluster's network plugin does not enforce policies: doctor says so; this
// checks what Litterbox asks of the cluster.)
func TestIntegrationKubernetesAllow(t *testing.T) {
	p := kubeProvider(t)
	ctx := context.Background()
	m := kubeManager(t, p, "busybox:latest")
	m.Repo.Config.Allow = []string{"localhost:8080", "10.9.8.7"}
	c, err := m.Create(ctx, create.CreateOptions{Name: "allow"})
	if err != nil {
		t.Fatal(err)
	}
	policy, err := p.Run("get", "networkpolicy", c.Container, "--output", "jsonpath={.spec}")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"cidr":"127.0.0.1/32"`, `"port":8080`, `"cidr":"10.9.8.7/32"`, `"policyTypes":["Ingress","Egress"]`} {
		if !strings.Contains(policy, want) {
			t.Errorf("policy lacks %s: %s", want, policy)
		}
	}
	// The kubelet writes the aliases under a "HostAliases" comment; no
	// proxy variables (there is no proxy).
	res, err := m.Agent.Bash(ctx, "allow", agent.BashOptions{Command: "grep -A3 HostAliases /etc/hosts | grep -c '^127.0.0.1.*localhost'; env | grep -ci _proxy; true"})
	if err != nil || res.Stdout != "1\n0\n" {
		t.Fatalf("hosts and proxy env: %+v %v", res, err)
	}
	if list, err := m.List(ctx, false); err != nil || len(list) != 1 || list[0].Status != create.StatusActive {
		t.Fatalf("list of an allow sandbox (no proxy to ask): %+v %v", list, err)
	}
	if _, err := m.Pause(ctx, "allow"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Resume(ctx, "allow"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Delete(ctx, "allow", true); err != nil {
		t.Fatal(err)
	}
	if out, _ := p.Run("get", "networkpolicy", c.Container, "--ignore-not-found", "--output", "name"); out != "" {
		t.Fatalf("policy left: %s", out)
	}
}

// TestIntegrationKubernetesBackgroundDuringCall: on a cluster a background
// command is started by a detached exec and ends up a child of PID 1, like
// an escapee of a call; one asked for while a call runs waits for that
// call's end, so the call's kill does not take it.
func TestIntegrationKubernetesBackgroundDuringCall(t *testing.T) {
	p := kubeProvider(t)
	ctx := context.Background()
	m := kubeManager(t, p, "busybox:latest")
	if _, err := m.Create(ctx, create.CreateOptions{Name: "work"}); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: looper("kbg")}); err != nil || res.ExitCode != 0 {
		t.Fatalf("bash: %+v %v", res, err)
	}
	bgErr := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		_, err := servicectl.Background(ctx, m.Repo, "work", "lbx-kbg", agent.BashOptions{Command: "/bin/sh /tmp/lbx-kbg.sh"})
		bgErr <- err
	}()
	if res, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "sleep 3"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("bash: %+v %v", res, err)
	}
	if err := <-bgErr; err != nil {
		t.Fatal(err)
	}
	res, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "grep -l 'lbx-kbg[.]sh' /proc/[0-9]*/cmdline 2>/dev/null | wc -l"})
	if err != nil || strings.TrimSpace(res.Stdout) == "0" {
		t.Fatalf("the background command did not survive the call it was started during: %+v %v", res, err)
	}
}
