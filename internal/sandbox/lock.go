package sandbox

import (
	"context"
	"os"

	"github.com/litterbox-dev/litterbox/internal/layout"
)

// lock serializes the calls that change one sandbox, across goroutines and
// across processes (several `litterbox mcp` on one repository), with flock on
// a file under the git dir. The kernel drops the lock if the process dies.
func (m *Manager) lock(ctx context.Context, slug string) (func(), error) {
	return m.lockNamed(ctx, slug, slug)
}

// lockNamed is lock on a lock of its own, for calls that must take turns
// with each other but not with file changes.
func (m *Manager) lockNamed(ctx context.Context, slug, lockName string) (func(), error) {
	// An unknown name gets no lock file (the call fails further on anyway):
	// lock files must not pile up for every name an agent tries.
	if _, err := os.Stat(m.layout().Record(slug)); err != nil {
		return func() {}, nil
	}
	return layout.LockSandbox(ctx, m.layout().Lock(lockName), slug)
}
