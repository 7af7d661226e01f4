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
	f, err := openLock(m.layout().Lock(lockName))
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return release(f), nil
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

// lockFile holds an exclusive lock on path until the returned function is
// called, waiting for it as long as it takes (for short, local work).
func lockFile(path string) (func(), error) {
	f, err := openLock(path)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return release(f), nil
}

// openLock opens the lock file at path, making it and its directory.
func openLock(path string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
}

func release(f *os.File) func() {
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}
}
