package kubecli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

// A warm pool's claim renames a box (box.Claimer), and no Kubernetes
// object can be renamed. A claim gives the box a second name instead:
//
//   - an alias, a ConfigMap named after the new name, holding only the
//     annotation annoAlias with the name of the record it stands for (no
//     labels, so no listing finds it);
//   - on the box's record, annoName: the name the box answers to now. Its
//     own name (or an older alias) no longer does, so a second claim of
//     one box finds no box of the name it asked for, as on docker.
//
// The pod, its record, its NetworkPolicy and its claims keep their names:
// the record's name is the box's object name. Every call by name
// resolves it (state); List reports a claimed box by the name it answers
// to.
const (
	annoName  = "dev.litterbox.name"
	annoAlias = "dev.litterbox.alias-of"
	// annoWas is on a record a claim took by an alias (a pool entry made
	// under another name): that alias, which answers to nothing now and
	// goes when the box does (Remove), so the claim spends no call on it.
	annoWas = "dev.litterbox.was"
)

// Claim gives box pooled the name name. The alias is made first: its
// create is what makes the new name the box's alone (a name in use fails
// it, as docker's rename does). Then the record is annotated with the new
// name under the resource version read before, so that of two claims of
// one box exactly one succeeds: the other finds the record changed
// (Conflict) and fails with box.ErrNotFound.
func (c *Client) Claim(ctx context.Context, pooled, name string) error {
	st, err := c.state(ctx, pooled)
	if err != nil {
		return err
	}
	alias := object{APIVersion: "v1", Kind: "ConfigMap", Metadata: meta{Name: name, Annotations: map[string]string{annoAlias: st.obj}}}
	if err := c.create(ctx, alias); err != nil {
		return err
	}
	args := []string{"annotate", "configmap/" + st.obj, annoName + "=" + name}
	if pooled != st.obj {
		args = append(args, annoWas+"="+pooled)
	}
	_, err = c.args(ctx, append(args, "--overwrite", "--resource-version", st.rec.Metadata.ResourceVersion)...)
	if err != nil && !lost(err) {
		// Cut off (a cancel, a timeout): the server may have written it.
		// The record says.
		now, _, rerr := c.objectState(context.WithoutCancel(ctx), st.obj, "")
		if rerr == nil && now.rec.Metadata.Annotations[annoName] == name {
			err = nil
		}
	}
	if err != nil {
		// The alias names no box that answers to it: take it back.
		_, _ = c.deleted(context.WithoutCancel(ctx), "configmap/"+name)
		if lost(err) {
			return &box.Error{Kind: box.ErrNotFound, Err: fmt.Errorf("%s was claimed by another: %w", pooled, err)}
		}
		return err
	}
	c.objects.remember(name, st.obj)
	return nil
}

// lost reports whether an annotate under a resource version failed
// because the object changed or went since it was read.
func lost(err error) bool {
	if errors.Is(err, errNotFound) {
		return true
	}
	ee, ok := runner.AsExit(err)
	return ok && strings.Contains(strings.ToLower(string(ee.Result.Stderr)), "(conflict)")
}

// objects remembers, for this process, the object name behind each name:
// checked when state resolved it (the name itself but for an alias), so
// an exec goes to the pod without reading the record first; a hint when a
// listing showed a record answering to the name, which state reads with
// the alias in one get and checks before it is used. A hint is anyone's
// to write (an annotation), so no exec follows one. What is checked is no
// proof of ownership either: the sandbox core inspects the box, through
// state, before it trusts it. An exec that finds no pod forgets the name
// and resolves it again.
type objects struct {
	mu sync.Mutex
	m  map[string]resolved
}

type resolved struct {
	obj     string
	checked bool
}

func (o *objects) set(name string, r resolved) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = map[string]resolved{}
	}
	if r.checked || !o.m[name].checked {
		o.m[name] = r
	}
}

// remember records what state checked; hint what a listing showed.
func (o *objects) remember(name, obj string) { o.set(name, resolved{obj, true}) }
func (o *objects) hint(name, obj string)     { o.set(name, resolved{obj, false}) }

func (o *objects) forget(name string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, name)
}

// of is the object name behind name and whether state checked it; name
// itself when nothing is known.
func (o *objects) of(name string) (obj string, checked bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r, ok := o.m[name]; ok {
		return r.obj, r.checked
	}
	return name, false
}
