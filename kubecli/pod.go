package kubecli

import (
	"context"

	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// Annotations and labels Litterbox puts on its objects besides the sandbox
// labels it is given.
const (
	// podKey is the ConfigMap key holding the pod's manifest.
	podKey = "pod.json"
	// labelPod selects one sandbox's pod (for its NetworkPolicy): a digest
	// of its name, which may be longer than a label value may be.
	labelPod = "dev.litterbox.pod"
	// annoStorage says where /src lives: "claim" or "emptyDir".
	annoStorage = "dev.litterbox.storage"
	// container is the pod's one container.
	container = "sandbox"
	// helperLink is where the delivery puts a link to the helper, so an
	// exec that needs an environment has a fixed path to run it by.
	helperLink = protocol.Dir + "/" + protocol.Name
)

// meta is an object's metadata.
type meta struct {
	Name              string            `json:"name"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	UID               string            `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	CreationTimestamp string            `json:"creationTimestamp,omitempty"`
	DeletionTimestamp string            `json:"deletionTimestamp,omitempty"`
}

type object struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   meta              `json:"metadata"`
	Spec       any               `json:"spec,omitempty"`
	Data       map[string]string `json:"data,omitempty"`
}

// labelValue is what Kubernetes accepts as a label value.
var labelValue = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)

// split keeps every label as an annotation (values such as repository paths
// are no valid label values) and those Kubernetes accepts as labels too, so
// selectors can find them.
func split(in map[string]string) (labels, annotations map[string]string) {
	labels, annotations = map[string]string{}, map[string]string{}
	for k, v := range in {
		annotations[k] = v
		if len(v) <= 63 && labelValue.MatchString(v) {
			labels[k] = v
		}
	}
	return labels, annotations
}

func podLabel(name string) string {
	sum := sha256.Sum256([]byte(name))
	return hex.EncodeToString(sum[:8])
}

// podManifest is the pod for spec: the sandbox's hardening, which docker
// expresses in run options, as the pod's securityContext. Its first process
// waits for the helper the host delivers over an exec, then becomes it: a
// cluster has no `docker cp` into a container not yet started.
func podManifest(spec box.Spec, claim bool, allow []allowed) (object, error) {
	uid, gid, err := numericUser(spec.User)
	if err != nil {
		return object{}, err
	}
	labels, annos := split(spec.Labels)
	labels[labelPod] = podLabel(spec.Name)
	env := []map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		env = append(env, map[string]string{"name": k, "value": spec.Env[k]})
	}
	volumes, mounts := podVolumes(spec, claim)
	switch spec.Network {
	case "", "none", "bridge":
	default:
		return object{}, box.Unsupported("network " + strconv.Quote(spec.Network) + " (kubernetes sandboxes have \"none\", a NetworkPolicy, or the pod network)")
	}
	if len(spec.Shared) > 0 || len(spec.VolumesFrom) > 0 {
		return object{}, box.Unsupported("volumes shared between containers")
	}
	limits, err := podLimits(spec)
	if err != nil {
		return object{}, err
	}
	var ports []map[string]any
	for _, p := range spec.Publish {
		ports = append(ports, map[string]any{"containerPort": p.ContainerPort, "protocol": "TCP"})
	}
	argv := append([]string{spec.Entrypoint}, spec.Cmd...)
	boot := []string{"/bin/sh", "-c", `while [ ! -x "$0" ]; do sleep 0.1; done; exec "$0" "$@"`}
	c := map[string]any{
		"name":            container,
		"image":           spec.Image,
		"imagePullPolicy": "IfNotPresent",
		"command":         append(boot, argv...),
		"workingDir":      spec.Workdir,
		"env":             env,
		"volumeMounts":    mounts,
		// Limits only, as docker's: with no requests Kubernetes would take
		// the limits as requests, and two sandboxes with 2 CPUs each would
		// not fit on a 2-core node.
		"resources": map[string]any{"limits": limits, "requests": requests(limits)},
		"securityContext": map[string]any{
			"allowPrivilegeEscalation": false,
			"readOnlyRootFilesystem":   spec.ReadOnly,
			"capabilities":             map[string]any{"drop": []string{"ALL"}},
		},
	}
	if ports != nil {
		c["ports"] = ports
	}
	podSpec := map[string]any{
		"restartPolicy":                 "Never",
		"automountServiceAccountToken":  false,
		"enableServiceLinks":            false,
		"terminationGracePeriodSeconds": 5,
		"securityContext": map[string]any{
			"runAsNonRoot":   true,
			"runAsUser":      uid,
			"runAsGroup":     gid,
			"fsGroup":        gid,
			"seccompProfile": map[string]string{"type": "RuntimeDefault"},
		},
		"containers": []any{c},
		"volumes":    volumes,
	}
	if spec.Hostname != "" {
		podSpec["hostname"] = spec.Hostname
	}
	if spec.Isolation != nil {
		podSpec["runtimeClassName"] = spec.Isolation.RuntimeClass
	}
	if aliases := hostAliases(allow); len(aliases) > 0 {
		podSpec["hostAliases"] = aliases
	}
	return object{APIVersion: "v1", Kind: "Pod", Metadata: meta{Name: spec.Name, Labels: labels, Annotations: annos}, Spec: podSpec}, nil
}

// podVolumes are the pod's volumes and the container's mounts of them:
// each of the spec's volumes (a claim, or an emptyDir for a pod that keeps
// nothing), then its anonymous volumes and its tmpfs mounts.
func podVolumes(spec box.Spec, claim bool) (volumes, mounts []map[string]any) {
	mounts, volumes = []map[string]any{}, []map[string]any{}
	for i, sv := range spec.Volumes {
		n := "vol" + strconv.Itoa(i)
		if i == 0 {
			n = "src" // the name of a pod made when /src was the only one
		}
		v := map[string]any{"name": n}
		if claim {
			v["persistentVolumeClaim"] = map[string]string{"claimName": sv.Volume}
		} else {
			v["emptyDir"] = map[string]string{}
		}
		volumes = append(volumes, v)
		mounts = append(mounts, map[string]any{"name": n, "mountPath": sv.Target})
	}
	for i, p := range spec.AnonVolumes {
		n := "anon" + strconv.Itoa(i)
		volumes = append(volumes, map[string]any{"name": n, "emptyDir": map[string]string{}})
		mounts = append(mounts, map[string]any{"name": n, "mountPath": p})
	}
	for i, p := range slices.Sorted(maps.Keys(spec.Tmpfs)) {
		n := "tmpfs" + strconv.Itoa(i)
		volumes = append(volumes, map[string]any{"name": n, "emptyDir": map[string]string{"medium": "Memory"}})
		mounts = append(mounts, map[string]any{"name": n, "mountPath": p})
	}
	return volumes, mounts
}

// podLimits are the container's memory and CPU limits, as Kubernetes
// quantities.
func podLimits(spec box.Spec) (map[string]string, error) {
	limits := map[string]string{}
	if spec.Memory != "" {
		m, err := quantity(spec.Memory)
		if err != nil {
			return nil, err
		}
		limits["memory"] = m
	}
	if spec.CPUs != "" {
		limits["cpu"] = spec.CPUs
	}
	return limits, nil
}

// numericUser reads "uid:gid" (or "uid"); a pod's securityContext takes
// numbers only, and never root: runAsNonRoot is part of the hardening.
func numericUser(u string) (int, int, error) {
	if u == "" {
		u = "1000:1000"
	}
	us, gs, ok := strings.Cut(u, ":")
	if !ok {
		gs = us
	}
	uid, err1 := strconv.Atoi(us)
	gid, err2 := strconv.Atoi(gs)
	if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("user %q: the kubernetes runtime needs a numeric uid:gid", u)
	}
	if uid == 0 {
		return 0, 0, fmt.Errorf("user %q: pods run as non-root (runAsNonRoot); choose another uid", u)
	}
	return uid, gid, nil
}

// quantity turns docker's memory size (512m, 2g, 1073741824) into a
// Kubernetes quantity.
func quantity(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	units := map[string]string{"b": "", "k": "Ki", "m": "Mi", "g": "Gi", "t": "Ti"}
	num, unit := s, ""
	if n := len(s); n > 0 && strings.ContainsAny(s[n-1:], "bkmgt") {
		num, unit = s[:n-1], units[s[n-1:]]
	}
	if _, err := strconv.ParseUint(num, 10, 64); err != nil {
		return "", fmt.Errorf("memory %q: want a size such as 512m or 2g", s)
	}
	return num + unit, nil
}

// record is the ConfigMap that stands for a container: it exists from
// Create to Remove, whether or not its pod runs.
func record(spec box.Spec, pod object, claim bool) (object, error) {
	data, err := json.Marshal(pod)
	if err != nil {
		return object{}, err
	}
	labels, annos := split(spec.Labels)
	annos[annoStorage] = "emptyDir"
	if claim {
		annos[annoStorage] = "claim"
	}
	return object{APIVersion: "v1", Kind: "ConfigMap", Metadata: meta{Name: spec.Name, Labels: labels, Annotations: annos}, Data: map[string]string{podKey: string(data)}}, nil
}

// Create makes the container's record, its claim (when the cluster has a
// default storage class) and its NetworkPolicy, then its pod, and waits for
// the pod to run: the helper is delivered into a running pod, where docker
// copies it into a created container.
func (c *Client) Create(ctx context.Context, spec box.Spec) (string, error) {
	class, err := c.StorageClass(ctx)
	if err != nil {
		return "", err
	}
	claim := class != "" && len(spec.Volumes) > 0
	var allow []allowed
	if len(spec.Allow) > 0 {
		if allow, err = resolveAllow(ctx, spec.Allow); err != nil {
			return "", err
		}
	}
	pod, err := podManifest(spec, claim, allow)
	if err != nil {
		return "", err
	}
	rec, err := record(spec, pod, claim)
	if err != nil {
		return "", err
	}
	if err := c.create(ctx, rec); err != nil {
		return "", err
	}
	c.objects.remember(spec.Name, spec.Name)
	for i := 0; claim && i < len(spec.Volumes); i++ {
		if err := c.ensureClaim(ctx, spec.Volumes[i].Volume, spec.VolumeLabels); err != nil {
			return "", err
		}
	}
	if spec.Network == "none" {
		policy := denyAll(spec.Name, spec.Labels)
		if len(allow) > 0 {
			policy = allowPolicy(spec.Name, spec.Labels, allow)
		}
		if err := c.create(ctx, policy); err != nil && !errors.Is(err, box.ErrNameInUse) {
			return "", err
		}
	}
	if err := c.create(ctx, pod); err != nil {
		return "", err
	}
	return spec.Name, c.waitRunning(ctx, spec.Name)
}

// denyAll is network "none": a NetworkPolicy that lets nothing in or out of
// the pod. Only a cluster whose network plugin enforces policies keeps it;
// doctor says whether this one does.
func denyAll(name string, labels map[string]string) object {
	l, a := split(labels)
	return object{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy", Metadata: meta{Name: name, Labels: l, Annotations: a},
		Spec: map[string]any{
			"podSelector": map[string]any{"matchLabels": map[string]string{labelPod: podLabel(name)}},
			"policyTypes": []string{"Ingress", "Egress"},
		}}
}

// Start makes the container's pod from its record, unless it runs already.
func (c *Client) Start(ctx context.Context, name string) error {
	st, err := c.state(ctx, name)
	if err != nil {
		return err
	}
	switch st.state {
	case "running":
		return nil
	case "created":
		return c.waitRunning(ctx, st.obj)
	}
	if st.pod != nil {
		// It ended (its PID 1 exited): make a new one.
		if _, err := c.deleted(ctx, "pod/"+st.obj); err != nil {
			return err
		}
	}
	var pod object
	if err := json.Unmarshal([]byte(st.rec.Data[podKey]), &pod); err != nil {
		return fmt.Errorf("the record of %s holds no pod: %w", name, err)
	}
	if err := c.create(ctx, pod); err != nil {
		return err
	}
	return c.waitRunning(ctx, st.obj)
}

// Pause deletes the pod and keeps its record and claim: a pod cannot be
// frozen. Its processes end; Start makes the pod again. A sandbox whose /src
// is an emptyDir is refused, since deleting its pod would delete /src.
func (c *Client) Pause(ctx context.Context, name string) error {
	st, err := c.state(ctx, name)
	if err != nil {
		return err
	}
	if st.pod == nil {
		return &box.Error{Kind: box.ErrNotRunning, Err: fmt.Errorf("pod %s is not running", name)}
	}
	if st.rec.Metadata.Annotations[annoStorage] == "emptyDir" {
		return fmt.Errorf("/src of %s is an emptyDir (the cluster had no default storage class), which deleting its pod would delete; delete the sandbox instead", name)
	}
	_, err = c.deleted(ctx, "pod/"+st.obj)
	return err
}

// Unpause: pods are never frozen (Pause deletes them), so there is nothing
// to thaw; the caller starts a stopped one.
func (c *Client) Unpause(ctx context.Context, name string) error {
	return &box.Error{Kind: box.ErrNotPaused, Err: fmt.Errorf("pod %s is not paused (pods are deleted, not frozen)", name)}
}

// Remove deletes the container's pod, record and NetworkPolicy, and the
// alias it answers to when a claim gave it one. An alias whose claim never
// finished (no record answers to it) is removed alone.
func (c *Client) Remove(ctx context.Context, name string) error {
	st, err := c.state(ctx, name)
	switch {
	case errors.Is(err, box.ErrNotFound) && st.dangling:
		if _, err := c.deleted(ctx, "configmap/"+name); err != nil {
			return err
		}
		return noSuch(name, nil)
	case errors.Is(err, box.ErrNotFound) && !st.elsewhere:
		// No record: what a delete cut short may have left of it.
		any, err := c.deleted(ctx, "pod/"+name, "networkpolicy/"+name)
		if err == nil && !any {
			err = noSuch(name, nil)
		}
		return err
	case err != nil:
		return err
	}
	objs := []string{"pod/" + st.obj, "configmap/" + st.obj, "networkpolicy/" + st.obj}
	for _, alias := range []string{name, st.rec.Metadata.Annotations[annoWas]} {
		if alias != "" && alias != st.obj && !slices.Contains(objs, "configmap/"+alias) {
			objs = append(objs, "configmap/"+alias)
		}
	}
	c.objects.forget(name)
	_, err = c.deleted(ctx, objs...)
	return err
}

// requests reserve nothing of what limits caps.
func requests(limits map[string]string) map[string]string {
	r := map[string]string{}
	for k := range limits {
		r[k] = "0"
	}
	return r
}
