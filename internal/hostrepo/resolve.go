package hostrepo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"syscall"

	"github.com/litterbox-dev/litterbox/internal/box"
)

// Known reports whether slug has a branch or a state record in this repo.
func (r *Repo) Known(ctx context.Context, slug string) (bool, error) {
	rec, err := r.Store().Load(slug)
	if err != nil || rec != nil {
		return rec != nil, err
	}
	refs, err := r.Git.ListRefs(ctx, r.Names(slug).Ref)
	return len(refs) > 0, err
}

// MissingOrNotFound turns a "no such container" into the right error.
func (r *Repo) MissingOrNotFound(ctx context.Context, slug string) error {
	if ok, err := r.Known(ctx, slug); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("sandbox '%s': %w (its branch %s is kept; `litterbox delete %s` removes the rest)", slug, ErrMissing, r.Names(slug).Branch, slug)
	}
	return r.NotFound(ctx, slug)
}

// NotFound is the error for a name this repository has no sandbox of,
// naming the ones it has (by branch or record: no engine call).
func (r *Repo) NotFound(ctx context.Context, slug string) error {
	names := map[string]bool{}
	for s := range r.Store().All() {
		names[s] = true
	}
	if refs, err := r.Git.ListRefs(ctx, "refs/heads/litterbox/"); err == nil {
		for _, r := range refs {
			if s := strings.TrimPrefix(r.Name, "refs/heads/litterbox/"); ParseNameExact(s) {
				names[s] = true
			}
		}
	}
	delete(names, slug)
	return &NotFoundError{Name: slug, Existing: slices.Sorted(maps.Keys(names))}
}

// Resolve turns a name as a person or an agent gave it into its slug, or
// says why it cannot be one.
func (r *Repo) Resolve(name string) (string, error) {
	slug, err := ParseName(name)
	if err != nil {
		return "", err
	}
	return slug, nil
}

// EnsureOwn is OwnContainer once per Repo and container: an agent's
// calls into its sandbox pay for the check once per server, not per call,
// and not at all where the record kept the container's id, by which the
// calls' handle (Box, CallBox) addresses it.
func (r *Repo) EnsureOwn(ctx context.Context, slug string) error {
	n := r.Names(slug)
	if _, ok := r.verified.Load(n.Container); ok || n.ID != "" {
		// An id the record kept is the box this repository made, and the
		// handle addresses the box by it: a container that took the
		// name since is not reached.
		return nil
	}
	_, _, err := r.OwnContainer(ctx, slug)
	return err
}

// OwnContainer inspects the sandbox's container and makes sure it is this
// repository's before anything acts on it.
func (r *Repo) OwnContainer(ctx context.Context, slug string) (Names, box.Inspection, error) {
	n := r.Names(slug)
	in, err := r.BoxOf(n).Inspect(ctx)
	switch {
	case errors.Is(err, box.ErrNotFound):
		return n, in, r.MissingOrNotFound(ctx, slug)
	case err != nil:
		return n, in, err
	case !r.Owns(ctx, n.Container, in.Labels):
		fe := Foreign("container", n.Container, in.Labels)
		if ok, _ := r.Known(ctx, slug); ok {
			fe.Sandbox = slug
		}
		return n, in, fe
	}
	r.verified.Store(n.Container, true)
	return n, in, nil
}

// Owned records that container is this repository's, as the labels of a
// container this Repo made say, so later calls need not inspect it.
func (r *Repo) Owned(container string) { r.verified.Store(container, true) }

// Disowned forgets container, removed: a container of that name made later
// is checked again.
func (r *Repo) Disowned(container string) { r.verified.Delete(container) }

// base returns the sandbox's base commit and branch tip.
func (r *Repo) BaseAndTip(ctx context.Context, name string) (slug, base, tip string, err error) {
	if slug, err = r.Resolve(name); err != nil {
		return "", "", "", err
	}
	n := r.Names(slug)
	if tip, err = r.Git.RevParse(ctx, n.Ref); err != nil {
		return "", "", "", err
	}
	if tip == "" {
		return "", "", "", r.MissingBranch(ctx, slug)
	}
	rec, err := r.Store().Load(slug)
	if err != nil {
		return "", "", "", err
	}
	if rec != nil && rec.Base != "" {
		return slug, rec.Base, tip, nil
	}
	// No record (made elsewhere): the fork point with HEAD is the best base.
	out, err := r.Git.Output(ctx, "merge-base", "HEAD", tip)
	if err != nil {
		return "", "", "", fmt.Errorf("cannot tell where %s starts: %w", n.Branch, err)
	}
	return slug, out, tip, nil
}

// MissingBranch is the error for sandbox slug whose branch is gone: not
// found when nothing else of it is left either.
func (r *Repo) MissingBranch(ctx context.Context, slug string) error {
	if ok, _ := r.Known(ctx, slug); !ok {
		return r.NotFound(ctx, slug)
	}
	return fmt.Errorf("branch %s of sandbox '%s' is gone", r.Names(slug).Branch, slug)
}

// ProcessAlive reports whether pid is a live process on this machine.
func ProcessAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
