package kubecli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
)

// ClaimSize is what a sandbox's claim asks for. Litterbox's own disk guard
// ([docker] disk) bounds /src; this is the provisioner's share of it.
const ClaimSize = "10Gi"

// StorageClass is the cluster's default storage class, "" when it has none
// (then /src is an emptyDir). Asked once per client.
func (c *Client) StorageClass(ctx context.Context) (string, error) {
	c.classOnce.Do(func() {
		res, err := c.args(ctx, "get", "storageclass", "--output", "json")
		if err != nil {
			c.classErr = err
			return
		}
		var list struct {
			Items []struct {
				Metadata meta `json:"metadata"`
			} `json:"items"`
		}
		if err := decode(res.Stdout, &list); err != nil {
			c.classErr = err
			return
		}
		for _, sc := range list.Items {
			a := sc.Metadata.Annotations
			if a["storageclass.kubernetes.io/is-default-class"] == "true" || a["storageclass.beta.kubernetes.io/is-default-class"] == "true" {
				c.class = sc.Metadata.Name
			}
		}
	})
	return c.class, c.classErr
}

// Storage says, for create's output, where a new sandbox's /src lives.
func (c *Client) Storage(ctx context.Context) string {
	class, err := c.StorageClass(ctx)
	switch {
	case err != nil:
		return "unknown (" + agenttext.FirstLine(err.Error()) + ")"
	case class == "":
		return "emptyDir (the cluster has no default storage class: /src goes with the pod, so pause is refused)"
	}
	return "PersistentVolumeClaim of storage class " + class
}

// ensureClaim makes the claim unless it exists (docker makes a named volume
// on first use the same way).
func (c *Client) ensureClaim(ctx context.Context, name string, labels map[string]string) error {
	err := c.CreateVolume(ctx, name, labels)
	if errors.Is(err, box.ErrNameInUse) {
		return nil
	}
	return err
}

// CreateVolume makes a PersistentVolumeClaim of the default storage class.
func (c *Client) CreateVolume(ctx context.Context, name string, labels map[string]string) error {
	l, a := split(labels)
	return c.create(ctx, object{APIVersion: "v1", Kind: "PersistentVolumeClaim", Metadata: meta{Name: name, Labels: l, Annotations: a},
		Spec: map[string]any{
			"accessModes": []string{"ReadWriteOnce"},
			"resources":   map[string]any{"requests": map[string]string{"storage": ClaimSize}},
		}})
}

// RemoveVolume deletes a claim, waiting for it to go.
func (c *Client) RemoveVolume(ctx context.Context, name string) error {
	any, err := c.deleted(ctx, "persistentvolumeclaim/"+name)
	if err == nil && !any {
		err = &box.Error{Kind: box.ErrNoSuchVolume, Err: fmt.Errorf("no such volume: %s", name)}
	}
	return err
}

// VolumeLabels are a claim's labels (kept as annotations).
func (c *Client) VolumeLabels(ctx context.Context, name string) (map[string]string, error) {
	var o struct {
		Metadata meta `json:"metadata"`
	}
	err := c.get(ctx, "persistentvolumeclaim", name, &o)
	if errors.Is(err, errNotFound) {
		return nil, &box.Error{Kind: box.ErrNoSuchVolume, Err: err}
	}
	return o.Metadata.Annotations, err
}

// Volumes lists the claims carrying every label of filters.
func (c *Client) Volumes(ctx context.Context, filters map[string]string) ([]string, error) {
	items, err := c.listMeta(ctx, "persistentvolumeclaims", filters)
	var names []string
	for _, it := range items {
		names = append(names, it.Name)
	}
	return names, err
}

// listMeta lists the objects of kinds whose annotations carry every label
// of filters.
func (c *Client) listMeta(ctx context.Context, kinds string, filters map[string]string) ([]meta, error) {
	res, err := c.args(ctx, getArgs(kinds, filters)...)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []struct {
			Kind     string `json:"kind"`
			Metadata meta   `json:"metadata"`
		} `json:"items"`
	}
	if err := decode(res.Stdout, &list); err != nil {
		return nil, err
	}
	var out []meta
	for _, it := range list.Items {
		if matches(it.Metadata.Annotations, filters) {
			out = append(out, it.Metadata)
		}
	}
	return out, nil
}

// getArgs gets kinds as JSON, narrowed by a selector on the filters that
// are valid label values; the caller matches the rest on annotations.
func getArgs(kinds string, filters map[string]string) []string {
	sel, _ := split(filters)
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		parts = append(parts, k+"="+sel[k])
	}
	args := []string{"get", kinds, "--output", "json"}
	if len(parts) > 0 {
		args = append(args, "--selector", strings.Join(parts, ","))
	}
	return args
}

func matches(annos, filters map[string]string) bool {
	for k, v := range filters {
		if annos[k] != v {
			return false
		}
	}
	return true
}

// List returns every container (record) carrying the filter labels, with
// its pod's state, in one call.
func (c *Client) List(ctx context.Context, filters map[string]string, _ []string) ([]box.Summary, error) {
	res, err := c.args(ctx, getArgs("configmaps,pods", filters)...)
	if err != nil {
		return nil, err
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := decode(res.Stdout, &list); err != nil {
		return nil, err
	}
	recs := map[string]meta{}
	pods := map[string]*podObject{}
	for _, raw := range list.Items {
		var kind struct{ Kind string }
		_ = json.Unmarshal(raw, &kind)
		switch kind.Kind {
		case "ConfigMap":
			var o object
			if err := json.Unmarshal(raw, &o); err != nil {
				return nil, err
			}
			if matches(o.Metadata.Annotations, filters) && o.Metadata.Annotations[annoAlias] == "" {
				recs[o.Metadata.Name] = o.Metadata
			}
		case "Pod":
			p := &podObject{}
			if err := json.Unmarshal(raw, p); err != nil {
				return nil, err
			}
			pods[p.Metadata.Name] = p
		}
	}
	var out []box.Summary
	for _, obj := range slices.Sorted(maps.Keys(recs)) {
		r := recs[obj]
		// A box a claim named is listed by the name it answers to; a call
		// by that name in this process reads its alias with its record.
		name := cmp.Or(r.Annotations[annoName], obj)
		c.objects.hint(name, obj)
		st, line := stateOf(pods[obj]), statusLine(pods[obj])
		created := r.CreationTimestamp
		if t, err := time.Parse(time.RFC3339, created); err == nil {
			created = t.Format("2006-01-02 15:04:05 -0700 MST") // as docker ps prints it
		}
		out = append(out, box.Summary{ID: r.UID, Name: name, State: st, Status: line, Created: created, Labels: r.Annotations})
	}
	return out, nil
}

// CheckIsolation refuses, before anything is made, a RuntimeClass the
// cluster does not have.
func (c *Client) CheckIsolation(ctx context.Context, iso *box.Isolation) error {
	var o struct {
		Handler string `json:"handler"`
	}
	err := c.get(ctx, "runtimeclass", iso.RuntimeClass, &o)
	if errors.Is(err, errNotFound) {
		return fmt.Errorf(`isolation "gvisor": the cluster has no RuntimeClass %q; install gVisor on its nodes and create the RuntimeClass (handler runsc), or name the cluster's in [kubernetes] runtime-class`, iso.RuntimeClass)
	}
	return err
}
