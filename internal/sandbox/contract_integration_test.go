//go:build integration

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/services"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// TestContract is the sandbox contract, run against every provider
// (testenv.ProviderNames) through the same Manager code: create, exec and
// delete on each; the rows of files and snapshots, transfers, the kernel,
// pause/resume with a service, and the idle stop on Docker and on each
// provider whose code or engine differs there (testenv.Provider.Rows).
func TestContract(t *testing.T) {
	for _, p := range testenv.Providers(t) {
		t.Run(p.Name, func(t *testing.T) { contract(t, p) })
	}
}

func contract(t *testing.T, p testenv.Provider) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbct"))
	testenv.NewRepo(t, dir, testenv.SmallFiles)
	m, err := Open(ctx, testenv.Exec(), engine.Runtime{Bin: p.Bin, Global: p.Global, Kubernetes: p.Kubernetes}, dir, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.RemoveAll(m.Repo.Root, m.Repo.RepoSlug) })
	m.Repo.Config.Services = map[string]config.ServiceSpec{"ticker": {Command: []string{"sh", "-c", "while :; do date; sleep 1; done"}, Stop: "TERM", StopTimeout: 5}}
	if p.GVisor {
		m.Repo.Config.Isolation, m.Repo.Config.GVisorFlags = config.IsolationGVisor, p.GVisorFlags
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// create (from the warm pool, filled for this config, on docker-pool)
	m.Repo.Config.PoolSize = p.Pool
	fill := func() {
		t.Helper()
		if p.Pool == 0 {
			return
		}
		st, err := m.Creator.FillPool(ctx)
		must(err)
		if len(st.Ready) != p.Pool {
			t.Fatalf("pool after fill: %+v", st)
		}
	}
	fill()
	c, err := m.Create(ctx, create.CreateOptions{Name: "Contract Box"})
	must(err)
	if pooled := m.Repo.Names(c.Name).Pool != ""; pooled != (p.Pool > 0) {
		t.Fatalf("sandbox from the pool: %v, want %v", pooled, p.Pool > 0)
	}
	if c.Name != "contract-box" || c.Status != create.StatusActive || c.Setup.Stdout != "hello world\n" || len(c.Services) != 1 || c.Services[0].State != services.Running {
		t.Fatalf("create: %+v", c)
	}
	if tip := testenv.Git(t, dir, "rev-parse", c.Branch); tip != c.Base {
		t.Fatalf("branch at %s, want the base %s", tip, c.Base)
	}
	// A second sandbox that stops itself after 10 s idle: it naps while
	// the first goes through the contract, and the last call wakes it.
	var nap *create.Created
	if p.Runs(testenv.RowIdle) {
		svcs := m.Repo.Config.Services
		m.Repo.Config.Idle, m.Repo.Config.Services = 10*time.Second, nil
		fill()
		nap, err = m.Create(ctx, create.CreateOptions{Name: "nap"})
		must(err)
		if pooled := m.Repo.Names(nap.Name).Pool != ""; pooled != (p.Pool > 0) {
			t.Fatalf("idle sandbox from the pool: %v, want %v", pooled, p.Pool > 0)
		}
		m.Repo.Config.Idle, m.Repo.Config.Services = 0, svcs
		_, err = m.Agent.Write(ctx, nap.Name, "kept.txt", []byte("kept\n"))
		must(err)
	}

	// exec: output, exit code, the sandbox user, the copied tree, the
	// sandbox's name in its environment
	res, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "id -u; cat README.md; echo $LITTERBOX_SANDBOX; echo err >&2; exit 3"})
	must(err)
	if res.ExitCode != 3 || res.Stdout != "1000\n# test repo\ncontract-box\n" || res.Stderr != "err\n" || res.Snapshot != "" {
		t.Fatalf("bash: %+v", res)
	}
	if p.Runs(testenv.RowKernel) {
		contractKernel(t, m, c, p)
	}
	if p.Runs(testenv.RowFiles) {
		contractFiles(t, m, c, dir)
	}
	if p.Runs(testenv.RowTransfer) {
		contractTransfer(t, m, c)
	}
	if p.Runs(testenv.RowPause) {
		contractPause(t, m, c, p)
	}
	if nap != nil {
		contractIdle(t, m, nap)
	}

	// delete: nothing of the sandbox is left
	vol := m.Repo.Names(c.Name).Volume
	_, err = m.Delete(ctx, c.Name, true)
	must(err)
	if _, err := m.Repo.Provider.Inspect(ctx, c.Container); !errors.Is(err, box.ErrNotFound) {
		t.Fatalf("container after delete: %v", err)
	}
	if vols := p.Volumes(); strings.Contains(vols, vol) {
		t.Fatalf("volume %s left", vol)
	}
	if refs := testenv.Git(t, dir, "for-each-ref", "refs/heads/litterbox/", "refs/litterbox/"); refs != "" {
		t.Fatalf("refs left: %s", refs)
	}
}

// contractMust fails the contract at an error.
func contractMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// contractKernel: the kernel is gVisor's (it says 4.4.0), or the host's.
func contractKernel(t *testing.T, m *Manager, c *create.Created, p testenv.Provider) {
	res, err := m.Agent.Bash(context.Background(), c.Name, agent.BashOptions{Command: "uname -r"})
	contractMust(t, err)
	if gv := strings.TrimSpace(res.Stdout) == "4.4.0"; gv != p.GVisor || (c.Isolation == config.IsolationGVisor) != p.GVisor {
		t.Fatalf("kernel %q, isolation %q, want gVisor's: %v", res.Stdout, c.Isolation, p.GVisor)
	}
}

// contractFiles: files and snapshots, every change a commit on the branch.
func contractFiles(t *testing.T, m *Manager, c *create.Created, dir string) {
	ctx := context.Background()
	must := func(err error) { t.Helper(); contractMust(t, err) }
	w, err := m.Agent.Write(ctx, c.Name, "docs/new.txt", []byte("one\ntwo\n"))
	must(err)
	if w.Snapshot == "" || testenv.Git(t, dir, "show", c.Branch+":docs/new.txt") != "one\ntwo" {
		t.Fatalf("write: %+v", w)
	}
	e, err := m.Agent.Edit(ctx, c.Name, "docs/new.txt", one("two", "three", false))
	must(err)
	r, err := m.Agent.Read(ctx, c.Name, "docs/new.txt", 0, 0)
	must(err)
	if e.Replacements != 1 || r.Content != "one\nthree\n" {
		t.Fatalf("edit %+v, read %+v", e, r)
	}
	if g, _, err := m.Agent.Grep(ctx, c.Name, "thr+ee", "", ""); err != nil || len(g) != 1 || g[0].Path != "docs/new.txt" {
		t.Fatalf("grep: %+v %v", g, err)
	}
	if paths, _, err := m.Agent.Glob(ctx, c.Name, "**/new.txt", ""); err != nil || len(paths) != 1 || paths[0] != "docs/new.txt" {
		t.Fatalf("glob: %v %v", paths, err)
	}
	res, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "rm README.md && chmod +x docs/new.txt && ln -s docs/new.txt link"})
	must(err)
	if res.Snapshot == "" {
		t.Fatal("bash changes made no snapshot")
	}
	tree := testenv.Git(t, dir, "ls-tree", "-r", c.Branch)
	if strings.Contains(tree, "README.md") || !strings.Contains(tree, "100755 blob") || !strings.Contains(tree, "120000 blob") {
		t.Fatalf("tree after rm/chmod/ln:\n%s", tree)
	}
}

// contractTransfer: upload and download.
func contractTransfer(t *testing.T, m *Manager, c *create.Created) {
	ctx := context.Background()
	must := func(err error) { t.Helper(); contractMust(t, err) }
	src := filepath.Join(t.TempDir(), "up.txt")
	must(os.WriteFile(src, []byte("uploaded\n"), 0o644))
	_, err := m.Agent.Upload(ctx, c.Name, src, "up.txt")
	must(err)
	out := filepath.Join(t.TempDir(), "down.txt")
	_, err = m.Agent.Download(ctx, c.Name, "up.txt", out)
	must(err)
	if data, _ := os.ReadFile(out); string(data) != "uploaded\n" {
		t.Fatalf("download: %q", data)
	}
}

// contractPause: pause and resume keep the files, and the service its
// pid. A pod cannot be frozen: on Kubernetes pause stops the sandbox
// (deletes the pod, keeps the claim) and resume starts the service again
// in a new pod.
func contractPause(t *testing.T, m *Manager, c *create.Created, p testenv.Provider) {
	ctx := context.Background()
	must := func(err error) { t.Helper(); contractMust(t, err) }
	if _, err := m.Agent.Write(ctx, c.Name, "kept.txt", []byte("kept\n")); err != nil {
		t.Fatal(err)
	}
	before, err := servicectl.Control(ctx, m.Repo, c.Name, services.Status, "ticker")
	must(err)
	_, err = m.Pause(ctx, c.Name)
	must(err)
	wantStatus, wantWord := create.StatusPaused, "paused"
	if p.Kubernetes {
		wantStatus, wantWord = create.StatusStopped, "stopped"
	}
	if s := listed(t, m, c.Name); s != wantStatus {
		t.Fatalf("status %s after pause", s)
	}
	if _, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "true"}); err == nil || !strings.Contains(err.Error(), wantWord) {
		t.Fatalf("bash while paused: %v", err)
	}
	_, err = m.Resume(ctx, c.Name)
	must(err)
	after, err := servicectl.Control(ctx, m.Repo, c.Name, services.Status, "ticker")
	must(err)
	if after[0].State != services.Running || (after[0].PID != before[0].PID) != p.Kubernetes {
		t.Fatalf("service across pause/resume: %+v -> %+v", before, after)
	}
	// What pause kept: the files.
	res, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "cat kept.txt"})
	must(err)
	if res.Stdout != "kept\n" {
		t.Fatalf("files across pause/resume: %+v", res)
	}
	stopped, err := servicectl.Control(ctx, m.Repo, c.Name, services.Stop, "ticker")
	must(err)
	if stopped[0].State != services.Stopped {
		t.Fatalf("stop: %+v", stopped)
	}
}

// contractIdle: the idle sandbox stopped itself, and a call starts it
// again with its files.
func contractIdle(t *testing.T, m *Manager, nap *create.Created) {
	ctx := context.Background()
	must := func(err error) { t.Helper(); contractMust(t, err) }
	for deadline := time.Now().Add(60 * time.Second); listed(t, m, nap.Name) != create.StatusIdle; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s with idle 10s is %q after a minute", nap.Name, listed(t, m, nap.Name))
		}
	}
	sb, err := m.Open(nap.Name)
	must(err)
	res, err := sb.Bash(ctx, agent.BashOptions{Command: "cat kept.txt"})
	must(err)
	if res.Stdout != "kept\n" || listed(t, m, nap.Name) != create.StatusActive {
		t.Fatalf("the call after the idle stop: %+v, status %s", res, listed(t, m, nap.Name))
	}
	_, err = m.Delete(ctx, nap.Name, true)
	must(err)
}

func listed(t *testing.T, m *Manager, name string) string {
	t.Helper()
	list, err := m.List(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if s.Name == name {
			return s.Status
		}
	}
	return ""
}
