//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// The Kubernetes provider's benchmarks, on the test cluster
// (scripts/k8s/with-cluster.sh), each next to the kubectl commands that are
// its floor: kubectl run and wait for a pod, kubectl exec, kubectl delete.

var benchKube = testenv.Provider{Name: "kubernetes", Bin: "kubectl", Kubernetes: true}

func kubectl(b *testing.B, stdin string, args ...string) {
	b.Helper()
	c := runner.Cmd{Name: "kubectl", Args: args}
	if stdin != "" {
		c.Stdin = strings.NewReader(stdin)
	}
	if res, err := testenv.Exec().Run(context.Background(), c); err != nil {
		b.Fatalf("kubectl %v: %v %s", args, err, res.Stderr)
	}
}

// kubeBenchManager is a Manager on the cluster for a new small repository.
func kubeBenchManager(b *testing.B) *Manager {
	b.Helper()
	if _, err := benchKube.Run("get", "--raw", "/readyz"); err != nil {
		b.Fatalf("no Kubernetes cluster (%v): run the benchmarks through scripts/k8s/with-cluster.sh", err)
	}
	dir := filepath.Join(b.TempDir(), testenv.UniqueName("lbkb"))
	testenv.NewRepo(b, dir, testenv.SmallFiles)
	m, err := Open(context.Background(), testenv.Exec(), engine.Runtime{Bin: "kubectl", Kubernetes: true}, dir, config.Default())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { benchKube.RemoveAll(m.Repo.Root, m.Repo.RepoSlug) })
	return m
}

func kubeBenchSandbox(b *testing.B) (*Manager, hostrepo.Names) {
	b.Helper()
	m := kubeBenchManager(b)
	if _, err := m.Create(context.Background(), create.CreateOptions{Name: "bench"}); err != nil {
		b.Fatal(err)
	}
	return m, m.Repo.Names("bench")
}

func BenchmarkKubeCreate(b *testing.B) {
	m := kubeBenchManager(b)
	benchMakes(b, m, func(ctx context.Context, name string) (*create.Created, error) {
		return m.Create(ctx, create.CreateOptions{Name: name})
	})
}

// BenchmarkRawKubeCreate: a pod of the same image running, and the tree
// streamed into it.
func BenchmarkRawKubeCreate(b *testing.B) {
	rawKubeCreates(b, func(name string) { rawKubePod(b, name) }, func(string) {})
}

// rawKubeCreates times pods made by ahead, then given what after does and
// the tree of a small repository, each deleted untimed; ahead runs under
// the timer unless it stops it.
func rawKubeCreates(b *testing.B, ahead, after func(name string)) {
	m := kubeBenchManager(b)
	tree, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "git", Args: []string{"-C", m.Repo.Root, "archive", "HEAD"}})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("%s-raw%d", m.Repo.Names("x").Container, i)
		i++
		ahead(name)
		after(name)
		kubectl(b, string(tree.Stdout), "exec", "-i", name, "--", "sh", "-c", "tar -x -C /tmp; true")
		b.StopTimer()
		kubectl(b, "", "delete", "pod", name, "--grace-period", "0", "--force")
		b.StartTimer()
	}
}

// rawKubePod runs a pod of the benchmarks' image and waits for it.
func rawKubePod(b *testing.B, name string) {
	kubectl(b, "", "run", name, "--image", "busybox:latest", "--image-pull-policy", "IfNotPresent", "--restart", "Never", "--command", "--", "sleep", "3600")
	kubectl(b, "", "wait", "--for", "condition=Ready", "pod/"+name, "--timeout", "120s")
}

func BenchmarkKubeBashNoop(b *testing.B) {
	m, _ := kubeBenchSandbox(b)
	ctx := context.Background()
	for b.Loop() {
		if res, err := m.Agent.Bash(ctx, "bench", agent.BashOptions{Command: "true"}); err != nil || res.Snapshot != "" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func BenchmarkRawKubeBashNoop(b *testing.B) {
	_, n := kubeBenchSandbox(b)
	for b.Loop() {
		kubectl(b, "", "exec", n.Container, "--container", "sandbox", "--", "sh", "-c", "true")
	}
}

func BenchmarkKubeWrite(b *testing.B) {
	m, _ := kubeBenchSandbox(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if res, err := m.Agent.Write(ctx, "bench", "written.txt", []byte(fmt.Sprintf("version %d\n", i))); err != nil || res.Snapshot == "" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}

func BenchmarkRawKubeWrite(b *testing.B) {
	_, n := kubeBenchSandbox(b)
	i := 0
	for b.Loop() {
		i++
		kubectl(b, fmt.Sprintf("version %d\n", i), "exec", "-i", n.Container, "--container", "sandbox", "--", "sh", "-c", "cat > /src/written.txt; true")
	}
}

func BenchmarkKubeDelete(b *testing.B) {
	m := kubeBenchManager(b)
	benchDeletes(b, m, func(ctx context.Context, name string) {
		if _, err := m.Delete(ctx, name, true); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkRawKubeDelete: the sandbox's objects deleted with one kubectl.
func BenchmarkRawKubeDelete(b *testing.B) {
	m := kubeBenchManager(b)
	benchDeletes(b, m, func(ctx context.Context, name string) {
		n := m.Repo.Names(name)
		kubectl(b, "", "delete", "pod/"+n.Container, "configmap/"+n.Container, "networkpolicy/"+n.Container, "persistentvolumeclaim/"+n.Volume)
		b.StopTimer()
		_ = m.Repo.Store().Remove(name)
		b.StartTimer()
	})
}

// BenchmarkKubeCreatePooled: a create that claims a pod of the warm pool,
// filled before each outside the timing, as the background refill fills
// it.
func BenchmarkKubeCreatePooled(b *testing.B) {
	benchPooledCreates(b, kubeBenchManager(b), func(*create.Created) error { return nil })
}

// BenchmarkRawKubeCreatePooled: a pod made ahead (untimed) given a name by
// one annotate, and the tree streamed into it.
func BenchmarkRawKubeCreatePooled(b *testing.B) {
	rawKubeCreates(b, func(name string) {
		b.StopTimer()
		rawKubePod(b, name)
		settle()
		b.StartTimer()
	}, func(name string) { kubectl(b, "", "annotate", "pod/"+name, "dev.litterbox.name=claimed") })
}

// BenchmarkKubeBashNoopPooled: a no-op call on a sandbox claimed from the
// pool, whose name is an alias (read with its pod in the one get of the
// ownership check); its floor is BenchmarkRawKubeBashNoop.
func BenchmarkKubeBashNoopPooled(b *testing.B) {
	m := kubeBenchManager(b)
	m.Repo.Config.PoolSize = 1
	if st, err := m.Creator.FillPool(context.Background()); err != nil || len(st.Ready) != 1 {
		b.Fatalf("fill: %+v %v", st, err)
	}
	c, err := m.Create(context.Background(), create.CreateOptions{Name: "bench"})
	if err != nil || c.Pool == "" {
		b.Fatalf("create from the pool: %+v %v", c, err)
	}
	ctx := context.Background()
	for b.Loop() {
		if res, err := m.Agent.Bash(ctx, "bench", agent.BashOptions{Command: "true"}); err != nil || res.Snapshot != "" {
			b.Fatalf("%+v %v", res, err)
		}
	}
}
