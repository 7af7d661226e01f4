package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
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
	if _, err := os.Stat(m.store().path(slug)); err != nil {
		return func() {}, nil
	}
	dir := m.snapDir("locks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockName+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, fmt.Errorf("locking sandbox '%s': %w", slug, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another call on sandbox '%s': %w", slug, ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
}
