//go:build integration

package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/pool"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/kubecli"
)

// kubeObject is the cluster's object ref (kind/name) as JSON, nil when
// there is none.
func kubeObject(t *testing.T, p testenv.Provider, ref string) map[string]any {
	t.Helper()
	out, err := p.Run("get", ref, "--ignore-not-found", "--output", "json")
	if err != nil {
		t.Fatal(err)
	}
	if out == "" {
		return nil
	}
	var o map[string]any
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

func annotations(o map[string]any) map[string]any {
	a, _ := o["metadata"].(map[string]any)["annotations"].(map[string]any)
	return a
}

// podSpec is a pod's spec without what names it: the claims of its
// volumes, its hostname, and the sandbox's name in its environment.
func podSpec(t *testing.T, p testenv.Provider, pod string) map[string]any {
	t.Helper()
	o := kubeObject(t, p, "pod/"+pod)
	if o == nil {
		t.Fatalf("no pod %s", pod)
	}
	spec := o["spec"].(map[string]any)
	delete(spec, "volumes")
	delete(spec, "hostname")
	for _, c := range spec["containers"].([]any) {
		c := c.(map[string]any)
		env, _ := c["env"].([]any)
		c["env"] = slices.DeleteFunc(env, func(e any) bool { return e.(map[string]any)["name"] == "LITTERBOX_SANDBOX" })
	}
	return spec
}

// On the cluster, a sandbox claimed from the pool is the pod a create
// makes: the same spec (security contexts, limits, runtime class, command,
// image, mounts) but for what names it; the name it took is an alias of
// the pod it was made as, which its entry's name no longer reaches. It
// runs, lists and deletes as one made for it, and its delete removes the
// pod, the record, the policy, the alias and the claims, leaving the pool
// as it was.
func TestIntegrationKubernetesPoolClaimIsACreate(t *testing.T) {
	p := kubeProvider(t)
	for _, image := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(imageName(image), func(t *testing.T) { kubeClaimIsACreate(t, p, image) })
	}
}

func kubeClaimIsACreate(t *testing.T, p testenv.Provider, image string) {
	ctx := context.Background()
	m := kubeManager(t, p, image)
	warm, cold := warmAndCold(t, m)
	entry := m.Repo.Names("warm").Pool

	alias := kubeObject(t, p, "configmap/"+warm.Container)
	obj, _ := annotations(alias)["dev.litterbox.alias-of"].(string)
	if obj == "" || alias["metadata"].(map[string]any)["labels"] != nil {
		t.Fatalf("the claimed name is no alias with no labels: %v", alias)
	}
	if _, err := m.Repo.Provider.Inspect(ctx, entry); !errors.Is(err, box.ErrNotFound) {
		t.Fatalf("the claimed entry %s still answers: %v", entry, err)
	}
	if in, err := m.Repo.Provider.Inspect(ctx, warm.Container); err != nil || in.State != "running" || in.Labels[pool.LabelDigest] == "" {
		t.Fatalf("the claimed name: %+v %v", in, err)
	}
	if w, c := podSpec(t, p, obj), podSpec(t, p, cold.Container); !reflect.DeepEqual(w, c) {
		t.Fatalf("pod spec differs:\npooled %v\nmade   %v", w, c)
	}
	wl, cl := annotations(kubeObject(t, p, "configmap/"+obj)), annotations(kubeObject(t, p, "configmap/"+cold.Container))
	if wl[hostrepo.LabelSandbox] != nil || cl[hostrepo.LabelSandbox] != "cold" || wl["dev.litterbox.name"] != warm.Container {
		t.Fatalf("records: pooled %v, made %v", wl, cl)
	}
	for _, l := range []map[string]any{wl, cl} {
		for _, k := range []string{pool.LabelDigest, pool.LabelVolumes, hostrepo.LabelSandbox, hostrepo.LabelBase, "dev.litterbox.name", "dev.litterbox.was"} {
			delete(l, k)
		}
	}
	if !reflect.DeepEqual(wl, cl) {
		t.Fatalf("labels differ:\npooled %v\nmade   %v", wl, cl)
	}

	script := "echo $LITTERBOX_SANDBOX; id; stat -c '%u:%g %a' /src $HOME /tmp; cat README.md; touch /src/w $HOME/w /tmp/w && echo writable"
	w, c := exec(t, m, "warm", script), exec(t, m, "cold", script)
	if !strings.HasPrefix(w, "warm\n") || strings.Replace(w, "warm", "cold", 1) != c || !strings.HasSuffix(c, "# test repo\nwritable\n") {
		t.Errorf("pooled sees %q, made %q", w, c)
	}
	list, err := m.List(ctx, false)
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %+v %v", list, err)
	}
	for _, s := range list {
		if s.Status != create.StatusActive || s.Branch != "litterbox/"+s.Name {
			t.Errorf("listed %+v", s)
		}
	}
	// A stop deletes the pod; the start makes it again under its name.
	if _, err := m.Pause(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Resume(ctx, "warm"); err != nil {
		t.Fatal(err)
	}
	if got := exec(t, m, "warm", "cat /src/w >/dev/null && echo $LITTERBOX_SANDBOX"); got != "warm\n" {
		t.Fatalf("after a stop and a start: %q", got)
	}

	st, err := m.Creator.PoolStatus(ctx)
	if err != nil || len(st.Ready) != 1 {
		t.Fatalf("pool before delete: %+v %v", st, err)
	}
	rec, err := m.Repo.Store().Load("warm")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Delete(ctx, "warm", true); err != nil {
		t.Fatal(err)
	}
	after, err := m.Creator.PoolStatus(ctx)
	if err != nil || !reflect.DeepEqual(after.Ready, st.Ready) || len(after.Stale) != 0 {
		t.Fatalf("pool after the delete of a pooled sandbox: %+v (before %+v) %v", after, st, err)
	}
	left := []string{"pod/" + obj, "configmap/" + obj, "networkpolicy/" + obj, "configmap/" + warm.Container, "configmap/" + entry, "persistentvolumeclaim/" + rec.Volume}
	for _, v := range rec.Volumes {
		left = append(left, "persistentvolumeclaim/"+v.Volume)
	}
	for _, ref := range left {
		if o := kubeObject(t, p, ref); o != nil && o["metadata"].(map[string]any)["deletionTimestamp"] == nil {
			t.Errorf("%s left after delete", ref)
		}
	}
}

// Creates racing for the cluster's pool of two, through Managers of their
// own, never share an entry.
func TestIntegrationKubernetesPoolClaimsNeverShare(t *testing.T) {
	m := kubeManager(t, kubeProvider(t), "busybox:latest")
	m.Repo.Config.PoolSize = 2
	fillPool(t, m, 2)
	claimsNeverShare(t, m)
}

// Two claims of one entry by two clients at once, without the host's lock
// (as two hosts would): exactly one wins; the other fails as docker's
// rename does, with no such box, and leaves no alias of its name.
func TestIntegrationKubernetesClaimIsAtomic(t *testing.T) {
	p := kubeProvider(t)
	m := kubeManager(t, p, "busybox:latest")
	m.Repo.Config.PoolSize = 1
	entry := fillPool(t, m, 1).Ready[0]
	targets := []string{m.Repo.Prefix() + "-race-a", m.Repo.Prefix() + "-race-b"}
	errs := make([]error, len(targets))
	var wg sync.WaitGroup
	for i, name := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = kubecli.New("kubectl", "", "", testenv.Exec()).Claim(context.Background(), entry, name)
		}()
	}
	wg.Wait()
	won := slices.IndexFunc(errs, func(err error) bool { return err == nil })
	if won < 0 || !errors.Is(errs[1-won], box.ErrNotFound) {
		t.Fatalf("claims: %v", errs)
	}
	if kubeObject(t, p, "configmap/"+targets[1-won]) != nil {
		t.Errorf("the losing claim left its alias %s", targets[1-won])
	}
	fresh := kubecli.New("kubectl", "", "", testenv.Exec())
	if in, err := fresh.Inspect(context.Background(), targets[won]); err != nil || in.State != "running" {
		t.Errorf("the winner %s: %+v %v", targets[won], in, err)
	}
	for _, gone := range []string{entry, targets[1-won]} {
		if _, err := fresh.Inspect(context.Background(), gone); !errors.Is(err, box.ErrNotFound) {
			t.Errorf("%s still answers: %v", gone, err)
		}
	}
	if err := fresh.Remove(context.Background(), targets[won]); err != nil {
		t.Fatal(err)
	}
}

// An attack from the namespace: a record of someone else's, with the
// managed label, that says it answers to a sandbox's name (an annotation
// anyone who can write ConfigMaps writes), beside a pod of its own. A
// listing shows it; an exec by the sandbox's name still runs in the
// sandbox's own pod, never in the impostor's, since only what state
// checked routes an exec.
func TestIntegrationKubernetesForgedNameNeverRoutesAnExec(t *testing.T) {
	p := kubeProvider(t)
	ctx := context.Background()
	m := kubeManager(t, p, "busybox:latest")
	c, err := m.Create(ctx, create.CreateOptions{Name: "victim"})
	if err != nil {
		t.Fatal(err)
	}
	imp := m.Repo.Prefix() + "-zzz-impostor"
	for _, args := range [][]string{
		{"run", imp, "--image", "busybox:latest", "--image-pull-policy", "IfNotPresent", "--restart", "Never", "--command", "--", "sleep", "3600"},
		{"create", "configmap", imp},
		{"label", "configmap/" + imp, hostrepo.LabelManaged + "=true"},
		{"annotate", "configmap/" + imp, hostrepo.LabelManaged + "=true", "dev.litterbox.name=" + c.Container},
		{"wait", "--for", "condition=Ready", "pod/" + imp, "--timeout", "120s"},
	} {
		if out, err := p.Run(args...); err != nil {
			t.Fatalf("kubectl %v: %v %s", args, err, out)
		}
	}
	cl := kubecli.New("kubectl", "", "", testenv.Exec())
	list, err := cl.List(ctx, map[string]string{hostrepo.LabelManaged: "true"}, nil)
	if err != nil || !slices.ContainsFunc(list, func(s box.Summary) bool { return s.Name == c.Container }) {
		t.Fatalf("the listing: %+v %v", list, err)
	}
	var out strings.Builder
	res, err := cl.Exec(ctx, c.Container, box.ExecSpec{Cmd: []string{"cat", "/src/README.md"}}, box.Streams{Stdout: &out})
	if err != nil || res.ExitCode != 0 || out.String() != "# test repo\n" {
		t.Fatalf("the exec by the sandbox's name ran elsewhere: %+v %v %q", res, err, out.String())
	}
	if got := exec(t, m, "victim", "cat README.md"); got != "# test repo\n" {
		t.Fatalf("the sandbox's exec: %q", got)
	}
}

// The same on the cluster, where deleting a claim in use only waits for
// its pod to go.
func TestIntegrationKubernetesPoolRemovalSparesAnEntryClaimedSince(t *testing.T) {
	removalSparesAClaim(t, kubeManager(t, kubeProvider(t), "busybox:latest"))
}
