package hostrepo

import (
	"context"
	"os"

	"github.com/litterbox-dev/litterbox/internal/layout"
)

// Lock serializes the calls that change one sandbox, across goroutines and
// across processes (several `litterbox mcp` on one repository), with flock on
// a file under the git dir. The kernel drops the Lock if the process dies.
func (r *Repo) Lock(ctx context.Context, slug string) (func(), error) {
	return r.LockNamed(ctx, slug, slug)
}

// LockNamed is lock on a lock of its own, for calls that must take turns
// with each other but not with file changes.
func (r *Repo) LockNamed(ctx context.Context, slug, lockName string) (func(), error) {
	// An unknown name gets no lock file (the call fails further on anyway):
	// lock files must not pile up for every name an agent tries.
	if _, err := os.Stat(r.Layout().Record(slug)); err != nil {
		return func() {}, nil
	}
	return layout.LockSandbox(ctx, r.Layout().Lock(lockName), slug)
}
