//go:build integration

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/litterbox-dev/litterbox/internal/basetree"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/pool"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// pooledManager is realManager with a warm pool of size, filled.
func pooledManager(t *testing.T, size int) *Manager {
	t.Helper()
	m := realManager(t)
	m.Repo.Config.PoolSize = size
	fillPool(t, m, size)
	return m
}

// createPooled creates sandbox name, which must come from the pool.
func createPooled(t *testing.T, m *Manager, name string) *create.Created {
	t.Helper()
	c, err := m.Create(context.Background(), create.CreateOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	if c.Pool == "" || m.Repo.Names(name).Pool != c.Pool {
		t.Fatalf("%s did not come from the pool (reported %q, recorded %q)", name, c.Pool, m.Repo.Names(name).Pool)
	}
	return c
}

func fillPool(t *testing.T, m *Manager, want int) *create.PoolState {
	t.Helper()
	st, err := m.Creator.FillPool(context.Background())
	if err != nil || len(st.Ready) != want || len(st.Stale) != 0 {
		t.Fatalf("fill: %+v %v", st, err)
	}
	return st
}

// inspected is what `docker inspect` says of a container: its HostConfig
// (every security setting and limit) and Config, without what names it.
func inspected(t *testing.T, container string) (host, cfg map[string]any) {
	t.Helper()
	out, err := testenv.Docker("inspect", "--format", "{{json .HostConfig}}\n{{json .Config}}", container)
	if err != nil {
		t.Fatal(err)
	}
	h, c, _ := strings.Cut(out, "\n")
	if err := json.Unmarshal([]byte(h), &host); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(c), &cfg); err != nil {
		t.Fatal(err)
	}
	return host, cfg
}

// warmAndCold fills m's pool of two and creates "warm" from it and "cold"
// without it; the pool keeps one entry.
func warmAndCold(t *testing.T, m *Manager) (warm, cold *create.Created) {
	t.Helper()
	m.Repo.Config.PoolSize = 2
	fillPool(t, m, 2)
	warm = createPooled(t, m, "warm")
	m.Repo.Config.PoolSize = 0
	cold, err := m.Create(context.Background(), create.CreateOptions{Name: "cold"})
	if err != nil {
		t.Fatal(err)
	}
	m.Repo.Config.PoolSize = 2
	if m.Repo.Names("cold").Pool != "" {
		t.Fatal("a create with no pool claimed an entry")
	}
	return warm, cold
}

// A sandbox claimed from the pool is the box a create makes: the same
// HostConfig (capabilities, no-new-privileges, read-only root, limits,
// tmpfs, network, runtime), the same image, user, command and environment
// (its name reaches every command instead of the box's own environment);
// only what names it differs, which the record says. It lists, runs and
// deletes as one made for it, and its delete leaves the pool as it was.
func TestIntegrationPoolClaimIsACreate(t *testing.T) {
	for _, image := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(imageName(image), func(t *testing.T) { claimIsACreate(t, image) })
	}
}

func claimIsACreate(t *testing.T, image string) {
	ctx := context.Background()
	m := realManager(t)
	m.Repo.Config.Image = image
	warm, cold := warmAndCold(t, m)
	wh, wc := inspected(t, warm.Container)
	ch, cc := inspected(t, cold.Container)
	for _, k := range []string{"Binds", "Mounts"} { // the volumes' names
		delete(wh, k)
		delete(ch, k)
	}
	if !reflect.DeepEqual(wh, ch) {
		t.Fatalf("HostConfig differs:\npooled %v\nmade   %v", wh, ch)
	}
	wl, cl := wc["Labels"].(map[string]any), cc["Labels"].(map[string]any)
	if wl[pool.LabelDigest] == nil || wl[hostrepo.LabelSandbox] != nil || cl[hostrepo.LabelSandbox] != "cold" {
		t.Fatalf("labels: pooled %v, made %v", wl, cl)
	}
	for _, l := range []map[string]any{wl, cl} {
		for _, k := range []string{pool.LabelDigest, pool.LabelVolumes, hostrepo.LabelSandbox, hostrepo.LabelBase, basetree.LabelTree} {
			delete(l, k)
		}
	}
	if !reflect.DeepEqual(wl, cl) {
		t.Fatalf("labels differ:\npooled %v\nmade   %v", wl, cl)
	}
	if wc["Hostname"] != pool.Hostname || cc["Hostname"] != "cold" {
		t.Fatalf("hostnames %v %v", wc["Hostname"], cc["Hostname"])
	}
	env := func(c map[string]any) []string {
		var out []string
		for _, e := range c["Env"].([]any) {
			if e != "LITTERBOX_SANDBOX=cold" {
				out = append(out, e.(string))
			}
		}
		slices.Sort(out)
		return out
	}
	for _, k := range []string{"Image", "User", "Entrypoint", "Cmd", "WorkingDir", "Volumes"} {
		if !reflect.DeepEqual(wc[k], cc[k]) {
			t.Errorf("%s: pooled %v, made %v", k, wc[k], cc[k])
		}
	}
	if !reflect.DeepEqual(env(wc), env(cc)) {
		t.Errorf("env: pooled %v, made %v", wc["Env"], cc["Env"])
	}

	// What an agent sees, and what a person lists.
	script := "echo $LITTERBOX_SANDBOX; hostname >/dev/null; id; stat -c '%u:%g %a' /src $HOME /tmp; cat README.md; touch /src/w $HOME/w /tmp/w && echo writable"
	w, c := exec(t, m, "warm", script), exec(t, m, "cold", script)
	if !strings.HasPrefix(w, "warm\n") || strings.Replace(w, "warm", "cold", 1) != c || !strings.HasSuffix(c, "# test repo\nwritable\n") || !strings.Contains(c, "uid=1000") {
		t.Errorf("pooled sees %q, made %q", w, c)
	}
	list, err := m.List(ctx, false)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	for _, s := range list {
		if s.Status != create.StatusActive || s.Base != warm.Base || s.Branch != "litterbox/"+s.Name || s.Limits == nil {
			t.Errorf("listed %+v", s)
		}
	}

	st, err := m.Creator.PoolStatus(ctx)
	if err != nil || len(st.Ready) != 1 {
		t.Fatalf("pool before delete: %+v %v", st, err)
	}
	vols := []string{m.Repo.Names("warm").Volume}
	if _, err := m.Delete(ctx, "warm", true); err != nil {
		t.Fatal(err)
	}
	after, err := m.Creator.PoolStatus(ctx)
	if err != nil || !reflect.DeepEqual(after.Ready, st.Ready) || len(after.Stale) != 0 {
		t.Fatalf("pool after the delete of a pooled sandbox: %+v (before %+v) %v", after, st, err)
	}
	out, _ := testenv.Docker("volume", "ls", "-q")
	for _, v := range append(vols, m.Repo.Names("warm").Pool) {
		if v != "" && strings.Contains(out, v) {
			t.Errorf("volume %s left after delete", v)
		}
	}
	if out, _ := testenv.Docker("ps", "-aq", "--filter", "name=^"+warm.Container+"$"); out != "" {
		t.Errorf("container %s left", warm.Container)
	}
}

// An entry made for another config, image or helper is never claimed: a
// create makes its box instead, and the next fill removes the entry with
// its volumes. An entry whose PID 1 ended is not claimed either.
func TestIntegrationPoolStaleEntryIsDiscarded(t *testing.T) {
	ctx := context.Background()
	m := pooledManager(t, 1)
	old := fillPool(t, m, 1).Ready[0]
	m.Repo.Config.Env = map[string]string{"CHANGED": "yes"}
	st, err := m.Creator.PoolStatus(ctx)
	if err != nil || len(st.Ready) != 0 || !reflect.DeepEqual(st.Stale, []string{old}) {
		t.Fatalf("status after a config change: %+v %v", st, err)
	}
	c, err := m.Create(ctx, create.CreateOptions{Name: "after-change"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Repo.Names(c.Name).Pool != "" || exec(t, m, c.Name, "echo $CHANGED") != "yes\n" {
		t.Fatalf("a create of a changed config claimed the stale entry %s", m.Repo.Names(c.Name).Pool)
	}
	if out, _ := testenv.Docker("ps", "-q", "--filter", "name=^"+old+"$"); out == "" {
		t.Fatal("the stale entry was used or removed by a create")
	}
	st = fillPool(t, m, 1)
	if !reflect.DeepEqual(st.Removed, []string{old}) || len(st.Made) != 1 {
		t.Fatalf("fill: %+v", st)
	}
	if out, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name=^"+old); out != "" {
		t.Fatalf("stale entry's volumes left: %s", out)
	}

	// An entry that stopped is stale too.
	stopped := st.Made[0]
	if _, err := testenv.Docker("stop", "--time", "0", stopped); err != nil {
		t.Fatal(err)
	}
	_, err = m.Create(ctx, create.CreateOptions{Name: "after-stop"})
	if err != nil || m.Repo.Names("after-stop").Pool != "" {
		t.Fatalf("create after the entry stopped: %v, claimed %q", err, m.Repo.Names("after-stop").Pool)
	}
	st = fillPool(t, m, 1)
	if !reflect.DeepEqual(st.Removed, []string{stopped}) || len(st.Made) != 1 {
		t.Fatalf("fill after stop: %+v", st)
	}

	// A smaller size gives the entries past it back.
	m.Repo.Config.PoolSize = 0
	if after := fillPool(t, m, 0); !reflect.DeepEqual(after.Removed, st.Made) {
		t.Fatalf("fill at size 0: %+v", after)
	}
}

// Creates racing for a pool of two, each through a Manager of its own (as
// separate processes are): two claim an entry each, never the same one,
// the others are made; each sandbox has its own container and files.
func TestIntegrationPoolConcurrentClaimsNeverShare(t *testing.T) {
	claimsNeverShare(t, pooledManager(t, 2))
}

// claimsNeverShare races four creates through Managers of their own on
// m's runtime for m's pool of two, filled.
func claimsNeverShare(t *testing.T, m *Manager) {
	ctx := context.Background()
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mi, err := Open(ctx, testenv.Exec(), m.Repo.Runtime, m.Repo.Root, m.Repo.Config)
			if err == nil {
				_, err = mi.Create(ctx, create.CreateOptions{Name: fmt.Sprintf("race-%d", i)})
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	claimed := map[string]string{}
	containers := map[string]bool{}
	for i := range n {
		name := fmt.Sprintf("race-%d", i)
		if errs[i] != nil {
			t.Fatalf("%s: %v", name, errs[i])
		}
		nm := m.Repo.Names(name)
		if nm.Pool != "" {
			if other, ok := claimed[nm.Pool]; ok {
				t.Fatalf("%s and %s both claimed %s", other, name, nm.Pool)
			}
			claimed[nm.Pool] = name
		}
		containers[nm.Container] = true
		if _, err := m.Agent.Write(ctx, name, "mine.txt", []byte(name)); err != nil {
			t.Fatal(err)
		}
	}
	if len(claimed) != 2 || len(containers) != n {
		t.Fatalf("claimed %v, containers %v", claimed, slices.Collect(maps.Keys(containers)))
	}
	for i := range n {
		name := fmt.Sprintf("race-%d", i)
		if got := exec(t, m, name, "cat mine.txt; echo; echo $LITTERBOX_SANDBOX"); got != name+"\n"+name+"\n" {
			t.Errorf("%s sees %q", name, got)
		}
	}
	if st, err := m.Creator.PoolStatus(ctx); err != nil || len(st.Ready) != 0 || len(st.Stale) != 0 {
		t.Fatalf("pool after the race: %+v %v", st, err)
	}
}

// A pooled sandbox whose repository is gone is found by list --all-repos
// elsewhere (by the name it took: it has no sandbox label) and removed by
// DeleteOrphan with the entry's volumes, which its label lists.
func TestIntegrationPoolOrphanIsListedAndDeletable(t *testing.T) {
	ctx := context.Background()
	m := pooledManager(t, 1)
	c := createPooled(t, m, "orphan")
	vol := m.Repo.Names("orphan").Volume
	rec, err := m.Repo.Store().Load("orphan")
	if err != nil || len(rec.Volumes) != 1 {
		t.Fatalf("record: %+v %v", rec, err)
	}
	home := rec.Volumes[0].Volume
	if _, err := m.Creator.DrainPool(ctx); err != nil {
		t.Fatal(err)
	}
	gone := m.Repo.Root
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	all, err := realManager(t).List(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(all, func(s Info) bool { return s.Repo == gone && s.Name == "orphan" && s.RepoGone }) {
		t.Fatalf("list --all-repos does not show the pooled orphan: %+v", all)
	}
	d, err := DeleteOrphan(ctx, testenv.Exec(), engine.Docker, gone, "orphan", true)
	want := []string{"container " + c.Container, "volume " + vol, "volume " + home}
	if rec.Layer != nil {
		want = append(want, "volume "+rec.Layer.Upper, "volume "+rec.Layer.Work)
	}
	if err != nil || !reflect.DeepEqual(d.Removed, want) {
		t.Fatalf("DeleteOrphan: %+v %v", d, err)
	}
}

// A create whose memory is a share of the budget (the config sets none)
// claims an entry the pool made with that share: the fill settles the
// memory as a create does.
func TestIntegrationPoolKeepsTheMemoryShare(t *testing.T) {
	m := realManager(t)
	// A share of 1g (1000g over 1000 sandboxes), below the default 2g; a
	// budget no concurrent suite comes near.
	m.Repo.Config.PoolSize, m.Repo.Config.MemoryBudget, m.Repo.Config.MaxSandboxes = 1, "1000g", 1000
	fillPool(t, m, 1)
	c := createPooled(t, m, "shared")
	if c.Limits.Memory != "1024m" {
		t.Fatalf("memory %q: want the share", c.Limits.Memory)
	}
	if mem, _ := testenv.Docker("inspect", "--format", "{{.HostConfig.Memory}}", c.Container); mem != "1073741824" {
		t.Fatalf("the container's memory is %s", mem)
	}
}

// A service of a pooled sandbox gets the sandbox's name too, as every
// command does (its box was made before the name was known).
func TestIntegrationPoolServicesKnowTheirSandbox(t *testing.T) {
	m := realManager(t)
	m.Repo.Config.PoolSize = 1
	m.Repo.Config.Services = map[string]config.ServiceSpec{"namer": {Command: []string{"sh", "-c", "echo $LITTERBOX_SANDBOX > /tmp/namer; exec sleep 1000"}, Stop: "TERM", StopTimeout: 2}}
	fillPool(t, m, 1)
	createPooled(t, m, "svc")
	if got := exec(t, m, "svc", "cat /tmp/namer"); got != "svc\n" {
		t.Fatalf("the service saw LITTERBOX_SANDBOX=%q", got)
	}
}

// A fill or drain lists the entries before it takes the claim lock; an
// entry a create claimed in between is a sandbox by then, and its volumes
// its /src: the removal passes it by (a cluster would delete the claim in
// use when the pod next goes; docker refuses).
func TestIntegrationPoolRemovalSparesAnEntryClaimedSince(t *testing.T) {
	removalSparesAClaim(t, realManager(t))
}

func removalSparesAClaim(t *testing.T, m *Manager) {
	ctx := context.Background()
	m.Repo.Config.PoolSize = 1
	fillPool(t, m, 1)
	listed, err := m.Creator.Pool().Entries(ctx)
	if err != nil || len(listed) != 1 {
		t.Fatalf("entries: %+v %v", listed, err)
	}
	createPooled(t, m, "claimed")
	exec(t, m, "claimed", "echo kept > kept.txt")
	if removed, left := m.Creator.RemoveEntries(ctx, listed); len(removed)+len(left) != 0 {
		t.Fatalf("removed %v, left %v of an entry claimed since", removed, left)
	}
	for _, step := range []func(context.Context, string) (Outcome, error){m.Pause, m.Resume} {
		if _, err := step(ctx, "claimed"); err != nil {
			t.Fatal(err)
		}
	}
	if got := exec(t, m, "claimed", "cat kept.txt"); got != "kept\n" {
		t.Fatalf("after a stop and a start: %q", got)
	}
}
