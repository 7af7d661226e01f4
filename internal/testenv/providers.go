package testenv

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/litterbox-dev/litterbox/runner"
)

// Provider is a container engine the contract suite runs against: a CLI and
// the global options that point it at its engine.
type Provider struct {
	Name   string
	Bin    string
	Global []string
	// Kubernetes is a cluster driven with kubectl (scripts/k8s/up.sh makes
	// the test cluster; KUBECONFIG points at it).
	Kubernetes bool
	// GVisor runs the sandboxes under gVisor (runsc), given GVisorFlags.
	GVisor      bool
	GVisorFlags []string
	// Pool makes every sandbox from a warm pool of this size, filled
	// before each create.
	Pool int
	// Rows are the contract suite's rows this provider runs, besides
	// create, exec and delete, which all run; nil for every row. A
	// provider runs the rows where its code or its engine differs from
	// Docker's, which runs them all (CONTRIBUTING.md).
	Rows []string
}

// The contract suite's rows that a provider may leave to Docker.
const (
	RowIdle     = "idle"     // a sandbox stopped for being idle, woken by a call
	RowKernel   = "kernel"   // the kernel the sandbox runs on
	RowFiles    = "files"    // write, edit, read, grep, glob and a bash change, each a snapshot
	RowTransfer = "transfer" // upload and download
	RowPause    = "pause"    // pause and resume with a service running
)

// Runs says whether p runs the contract row.
func (p Provider) Runs(row string) bool {
	return p.Rows == nil || slices.Contains(p.Rows, row)
}

// ProviderNames are the engines the contract suite covers unless
// LITTERBOX_PROVIDERS names fewer (comma-separated). Two names stand for
// groups: "local" for every engine on this machine and "cluster" for the
// Kubernetes ones, so that make test can run the first while the test
// cluster is still being built.
var ProviderNames = []string{"docker", "docker-tcp", "podman", "kubernetes", "docker-gvisor", "podman-gvisor", "kubernetes-gvisor", "docker-pool", "kubernetes-pool"}

// Providers returns the engines to test, each ready: docker on its local
// socket, docker over TCP (a loopback port forwarded to that socket for the
// test's lifetime) and podman. An engine that is asked for but not usable
// fails the test: CI installs all three, and a skipped provider would pass
// without testing anything.
func Providers(t *testing.T) []Provider {
	t.Helper()
	names := ProviderNames
	if v := os.Getenv("LITTERBOX_PROVIDERS"); v != "" {
		names = expandGroups(strings.Split(v, ","))
	}
	var out []Provider
	for _, n := range names {
		switch n {
		case "docker":
			out = append(out, Provider{Name: n, Bin: "docker"})
		case "docker-tcp":
			// Only the transport differs: the streams of calls and copies.
			out = append(out, Provider{Name: n, Bin: "docker", Global: []string{"--host", "tcp://" + forwardDockerSocket(t)}, Rows: []string{RowFiles, RowTransfer}})
		case "podman":
			out = append(out, Provider{Name: n, Bin: "podman"})
		case "kubernetes":
			out = append(out, Provider{Name: n, Bin: "kubectl", Kubernetes: true})
		case "docker-pool":
			// Sandboxes claimed from a warm pool must pass as made.
			// The box differs (a renamed entry, its volumes named by the
			// record), not the kernel or the engine.
			out = append(out, Provider{Name: n, Bin: "docker", Pool: 1, Rows: []string{RowIdle, RowFiles, RowTransfer, RowPause}})
		case "kubernetes-pool":
			// The same on the cluster, where a claim is an alias.
			out = append(out, Provider{Name: n, Bin: "kubectl", Kubernetes: true, Pool: 1, Rows: []string{RowIdle, RowFiles, RowTransfer}})
		case "docker-gvisor":
			// .ci/run registers runsc with the engine (scripts/gvisor.sh).
			out = append(out, Provider{Name: n, Bin: "docker", GVisor: true})
		case "kubernetes-gvisor":
			// The test cluster's RuntimeClass gvisor (scripts/k8s/up.sh).
			// The kernel differs; the cluster's lifecycle is kubernetes's.
			out = append(out, Provider{Name: n, Bin: "kubectl", Kubernetes: true, GVisor: true, Rows: []string{RowKernel, RowFiles, RowTransfer}})
		case "podman-gvisor":
			// Rootful Podman on these machines needs runsc's own network
			// off (NOTES-docker.md); a sandbox of network "none" has only
			// loopback either way.
			// What Podman and gVisor each change runs on podman and on
			// docker-gvisor; here, runsc as Podman starts it.
			out = append(out, Provider{Name: n, Bin: "podman", GVisor: true, GVisorFlags: []string{"network=none", "host-uds=open"}, Rows: []string{RowKernel, RowFiles, RowPause}})
		default:
			t.Fatalf("LITTERBOX_PROVIDERS: unknown provider %q (want %s)", n, strings.Join(ProviderNames, ", "))
		}
	}
	for _, p := range out {
		if p.Kubernetes {
			if _, err := p.Run("get", "--raw", "/readyz"); err != nil {
				t.Fatalf("provider kubernetes has no cluster (%v): make test brings one up with scripts/k8s/with-cluster.sh, or narrow LITTERBOX_PROVIDERS", err)
			}
			continue
		}
		if _, err := p.Run("version"); err != nil {
			t.Fatalf("provider %s is not usable (%v); .ci/run installs it, or narrow LITTERBOX_PROVIDERS", p.Name, err)
		}
		if _, err := p.Run("image", "inspect", "busybox:latest"); err != nil {
			t.Fatalf("provider %s has no busybox:latest: run scripts/busybox-image.sh %s", p.Name, p.Bin)
		}
	}
	return out
}

// expandGroups replaces the group names "local" and "cluster" by the
// providers they stand for.
func expandGroups(names []string) []string {
	var out []string
	for _, n := range names {
		switch n {
		case "local", "cluster":
			for _, p := range ProviderNames {
				if strings.HasPrefix(p, "kubernetes") == (n == "cluster") {
					out = append(out, p)
				}
			}
		default:
			out = append(out, n)
		}
	}
	return out
}

// Run runs the provider's CLI with its global options.
func (p Provider) Run(args ...string) (string, error) {
	res, err := Exec().Run(context.Background(), runner.Cmd{Name: p.Bin, Args: append(append([]string{}, p.Global...), args...)})
	return strings.TrimSpace(string(res.Stdout)), err
}

// RemoveAll is the package's RemoveAll on this provider's engine.
func (p Provider) RemoveAll(repoRoot, repoSlug string) {
	if p.Kubernetes {
		p.removeObjects("litterbox-" + repoSlug + "-")
		return
	}
	if ids, _ := p.Run("ps", "-aq", "--filter", "label=dev.litterbox.repo="+repoRoot); ids != "" {
		_, _ = p.Run(append([]string{"rm", "-f", "-v"}, strings.Fields(ids)...)...)
	}
	vols, _ := p.Run("volume", "ls", "-q")
	for _, v := range strings.Fields(vols) {
		if strings.HasPrefix(v, "litterbox-"+repoSlug+"-") {
			_, _ = p.Run("volume", "rm", "-f", v)
		}
	}
}

// forwardDockerSocket serves a loopback TCP port that relays every connection
// to the local docker socket, as a remote engine would be reached, and
// returns its address. It stops when the test ends.
func forwardDockerSocket(t *testing.T) string {
	t.Helper()
	sock := "/var/run/docker.sock"
	if h, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok {
		sock = h
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if err != nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				relay(c, sock)
			}()
		}
	}()
	return l.Addr().String()
}

func relay(c net.Conn, sock string) {
	defer c.Close()
	u, err := net.Dial("unix", sock)
	if err != nil {
		return
	}
	defer u.Close()
	done := make(chan struct{}, 2)
	// Each direction closes its write side when its source ends, so a
	// half-closed stream (docker cp, exec stdin) ends on the other side too.
	go func() {
		_, _ = io.Copy(u, c)
		_ = u.(*net.UnixConn).CloseWrite()
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, u)
		_ = c.(*net.TCPConn).CloseWrite()
		done <- struct{}{}
	}()
	<-done
	<-done
}

// removeObjects deletes every pod, record, claim and policy whose name has
// prefix.
func (p Provider) removeObjects(prefix string) {
	names, _ := p.Run("get", "pods,configmaps,networkpolicies,persistentvolumeclaims", "--output", "name")
	var mine []string
	for _, n := range strings.Fields(names) {
		if _, name, _ := strings.Cut(n, "/"); strings.HasPrefix(name, prefix) {
			mine = append(mine, n)
		}
	}
	if len(mine) > 0 {
		_, _ = p.Run(append([]string{"delete", "--ignore-not-found", "--wait=true"}, mine...)...)
	}
}

// Volumes lists the names of the provider's volumes (claims on Kubernetes).
func (p Provider) Volumes() string {
	if p.Kubernetes {
		out, _ := p.Run("get", "persistentvolumeclaims", "--output", "name")
		return out
	}
	out, _ := p.Run("volume", "ls", "-q")
	return out
}
