package sandbox

import (
	"context"
	"errors"
	"fmt"
	"github.com/litterbox-dev/litterbox/internal/basetree"
	"slices"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/pool"
	"github.com/litterbox-dev/litterbox/runner"
)

// Deleted says what Delete removed.
type Deleted struct {
	Name    string   `json:"name"`
	Removed []string `json:"removed"`
	// BranchTip is the commit the deleted branch pointed at, so the work can
	// still be recovered with `git branch litterbox/<name> <tip>`.
	BranchTip string `json:"branch_tip,omitempty"`
	// LeftAlone are resources under this sandbox's names that belong to
	// another repository, with their owner.
	LeftAlone []string `json:"left_alone,omitempty"`
}

// Delete removes a sandbox's container, volume, branch, refs and state. An
// active sandbox is refused unless force is set. When a step fails the others
// still run, and the error lists exactly what is left. A container or volume
// of another repository is never touched, whatever this one's records say.
func (m *Manager) Delete(ctx context.Context, name string, force bool) (*Deleted, error) {
	return m.delete(ctx, name, force, m.Repo.Git)
}

// delete is Delete with the git client for the refs: merge's has hooks off.
func (m *Manager) delete(ctx context.Context, name string, force bool, g *gitcli.Client) (*Deleted, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, err
	}
	// Refused before waiting for a call: a running sandbox without force.
	look, err := m.lookBeforeDelete(ctx, slug, force)
	if err != nil {
		return nil, err
	}
	unlock, err := m.Repo.Lock(ctx, slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return m.deleteLocked(ctx, slug, look, g, "")
}

// deleteHeld is delete by a caller that holds the sandbox's lock (merge),
// of a branch still at tip: a branch that moved is kept, with the sandbox,
// since what moved it is work nobody took.
func (m *Manager) deleteHeld(ctx context.Context, slug string, force bool, g *gitcli.Client, tip string) (*Deleted, error) {
	look, err := m.lookBeforeDelete(ctx, slug, force)
	if err != nil {
		return nil, err
	}
	return m.deleteLocked(ctx, slug, look, g, tip)
}

// deleteLook is what delete found of the sandbox's container.
type deleteLook struct {
	hasContainer bool
	foreignErr   error // the container under its name is not this repository's
}

// lookBeforeDelete inspects the sandbox's container, refusing a running
// one without force.
func (m *Manager) lookBeforeDelete(ctx context.Context, slug string, force bool) (deleteLook, error) {
	n := m.Repo.Names(slug)
	in, err := m.Repo.BoxOf(n).Inspect(ctx)
	l := deleteLook{hasContainer: err == nil}
	if err != nil && !errors.Is(err, box.ErrNotFound) {
		return l, fmt.Errorf("deleting sandbox '%s': %w", slug, err)
	}
	if l.hasContainer && !m.Repo.Owns(ctx, n.Container, in.Labels) {
		l.foreignErr, l.hasContainer = hostrepo.Foreign("container", n.Container, in.Labels), false
	}
	if l.hasContainer && in.State == "running" && !force {
		return l, &ActiveError{Name: slug}
	}
	return l, nil
}

// deleteLocked removes the sandbox, its lock held; with tip set, only if
// its branch is still there.
func (m *Manager) deleteLocked(ctx context.Context, slug string, look deleteLook, g *gitcli.Client, tip string) (*Deleted, error) {
	n := m.Repo.Names(slug)
	d := &Deleted{Name: slug}
	hasContainer, foreignErr := look.hasContainer, look.foreignErr
	refs, err := g.ListRefs(ctx, n.Ref, "refs/litterbox/"+slug+"/")
	if err != nil {
		return nil, err
	}
	rec, err := m.Repo.Store().Load(slug)
	if err != nil {
		return nil, err
	}
	if !hasContainer && len(refs) == 0 && rec == nil {
		if foreignErr != nil {
			return nil, foreignErr
		}
		return nil, m.Repo.NotFound(ctx, slug)
	}
	if foreignErr != nil {
		d.LeftAlone = append(d.LeftAlone, foreignErr.Error())
	}
	if tip != "" {
		for _, r := range refs {
			if r.Name == n.Ref && r.ID != tip {
				return nil, fmt.Errorf("not deleted: %s moved from %s to %s after it was applied; the sandbox is kept with its new work: review it (litterbox diff %s) and apply again", n.Branch, hostrepo.ShortID(tip), hostrepo.ShortID(r.ID), slug)
			}
		}
	}

	left := m.removeBox(ctx, n, hasContainer, foreignErr != nil, rec, d)
	if len(left) > 0 {
		// Keep the branch and state: they are how a retry finds the rest.
		return d, &PartialDeleteError{Name: slug, Left: append(left, "branch "+n.Branch+" and state (kept so that the delete can be retried)")}
	}
	left = removeRefs(ctx, g, refs, n, d)
	left = append(left, m.Repo.RemoveHostState(slug)...)
	if rec != nil {
		if err := m.Repo.Store().Remove(slug); err != nil {
			left = append(left, fmt.Sprintf("state file %s (%v)", m.Repo.Layout().Record(slug), err))
		} else {
			d.Removed = append(d.Removed, "state")
		}
	}
	if rec != nil && rec.Layer != nil {
		// The base tree it was made over may now be one too many.
		removed, l := m.Creator.Bases().Prune(ctx, basetree.KeepUnused)
		d.Removed, left = append(d.Removed, removed...), append(left, l...)
	}
	if len(left) > 0 {
		return d, &PartialDeleteError{Name: slug, Left: left}
	}
	return d, nil
}

// removeBox removes the sandbox's container, then its volume and egress
// proxy, and says what it could not remove. A foreign container's volume
// is not touched either.
func (m *Manager) removeBox(ctx context.Context, n hostrepo.Names, hasContainer, foreign bool, rec *layout.Record, d *Deleted) (left []string) {
	if hasContainer {
		if err := m.Repo.BoxOf(n).Remove(ctx); err != nil && !errors.Is(err, box.ErrNotFound) {
			left = append(left, fmt.Sprintf("container %s (%v)", n.Container, err))
		} else {
			d.Removed = append(d.Removed, "container "+n.Container)
			m.Repo.Disowned(n.Container)
		}
	}
	// The volume cannot go while its container exists; try it only when the
	// container is gone, so the report names the real obstacle.
	switch {
	case foreign:
	case len(left) == 0:
		for _, v := range append([]string{n.Volume}, m.Creator.ExtraVolumes(ctx, n, rec)...) {
			left = append(left, m.removeVolume(ctx, v, hasContainer, d)...)
		}
		if rec != nil && rec.Egress || rec == nil && m.Proxies().Owns(ctx, n) {
			removed, l := m.Proxies().Remove(ctx, n)
			d.Removed, left = append(d.Removed, removed...), append(left, l...)
		}
	default:
		left = append(left, "volume "+n.Volume+" (in use by the container)") // and its other volumes
	}
	return left
}

// removeRefs deletes the sandbox's branch and its other refs, each only
// if it still points where it was listed.
func removeRefs(ctx context.Context, g *gitcli.Client, refs []gitcli.Ref, n hostrepo.Names, d *Deleted) (left []string) {
	for _, r := range refs {
		if err := g.DeleteRef(ctx, r.Name, r.ID); err != nil {
			left = append(left, fmt.Sprintf("ref %s (%v)", r.Name, err))
			continue
		}
		if r.Name == n.Ref {
			d.BranchTip = r.ID
			d.Removed = append(d.Removed, "branch "+n.Branch)
		} else {
			d.Removed = append(d.Removed, "ref "+r.Name)
		}
	}
	return left
}

// removeVolume removes the sandbox's volume. The volume of a container that
// was ours is ours; a volume found alone is checked first, as the container
// would have been.
func (m *Manager) removeVolume(ctx context.Context, vol string, ofOurContainer bool, d *Deleted) (left []string) {
	if !ofOurContainer {
		labels, err := m.Repo.Provider.VolumeLabels(ctx, vol)
		switch {
		case errors.Is(err, box.ErrNoSuchVolume):
			return nil
		case err != nil:
			return []string{fmt.Sprintf("volume %s (%v)", vol, err)}
		case !m.Repo.Owns(ctx, vol, labels):
			d.LeftAlone = append(d.LeftAlone, hostrepo.Foreign("volume", vol, labels).Error())
			return nil
		}
	}
	err := m.Repo.Provider.RemoveVolume(ctx, vol)
	switch {
	case err == nil:
		d.Removed = append(d.Removed, "volume "+vol)
	case !errors.Is(err, box.ErrNoSuchVolume):
		left = append(left, fmt.Sprintf("volume %s (%v)", vol, err))
	}
	return left
}

// DeleteOrphan deletes a sandbox whose repository is gone (moved or deleted):
// found by its labels, its container and volume are removed. Its branch and
// state lived in that repository's git dir, so they went with it.
func DeleteOrphan(ctx context.Context, r runner.Runner, rt engine.Runtime, repoPath, name string, force bool) (*Deleted, error) {
	slug, err := hostrepo.ParseName(name)
	if err != nil {
		return nil, err
	}
	p := rt.Provider(r)
	// By the repository's label, then the sandbox each is: one claimed
	// from a warm pool has no sandbox label.
	all, err := p.List(ctx, map[string]string{hostrepo.LabelManaged: "true", hostrepo.LabelRepo: repoPath}, []string{hostrepo.LabelRepoSlug, hostrepo.LabelRepoID, hostrepo.LabelSandbox, pool.LabelVolumes})
	if err != nil {
		return nil, err
	}
	cts := slices.DeleteFunc(all, func(c box.Summary) bool { return hostrepo.SlugOf(c.Name, c.Labels) != slug })
	if len(cts) == 0 {
		return nil, fmt.Errorf("no sandbox '%s' of repository %s (litterbox list --all-repos shows them all)", slug, repoPath)
	}
	d := &Deleted{Name: slug}
	var left []string
	for _, c := range cts {
		if c.State == "running" && !force {
			return nil, &ActiveError{Name: slug}
		}
		if err := p.Remove(ctx, c.Name); err != nil && !errors.Is(err, box.ErrNotFound) {
			left = append(left, "container "+c.Name)
			continue
		}
		d.Removed = append(d.Removed, "container "+c.Name)
		vols := []string{c.Name + "-src"}
		if v := pool.VolumesOf(c.Labels); len(v) > 0 {
			vols = v // claimed from a warm pool: the entry's
		}
		for _, vol := range vols {
			if err := p.RemoveVolume(ctx, vol); err == nil {
				d.Removed = append(d.Removed, "volume "+vol)
			} else if !errors.Is(err, box.ErrNoSuchVolume) {
				left = append(left, "volume "+vol)
			}
		}
	}
	// Its egress proxy, by the same labels, and the proxy's volume.
	proxies, err := p.List(ctx, map[string]string{hostrepo.LabelManaged: egressproxy.Role, hostrepo.LabelRepo: repoPath, hostrepo.LabelSandbox: slug}, nil)
	if err != nil {
		left = append(left, "its egress proxy ("+err.Error()+")")
	}
	for _, c := range proxies {
		removed, l := egressproxy.RemoveContainer(ctx, p, c.Name)
		d.Removed, left = append(d.Removed, removed...), append(left, l...)
	}
	if len(left) > 0 {
		return d, &PartialDeleteError{Name: slug, Left: left}
	}
	return d, nil
}
