package layout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// LockSandbox holds the lock file at path for sandbox slug until the
// returned function is called: flock, so it serializes across goroutines
// and processes (several `litterbox mcp` on one repository), and the
// kernel drops it if the process dies. It waits until ctx is done.
func LockSandbox(ctx context.Context, path, slug string) (func(), error) {
	f, err := openLock(path)
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

// LockFile holds an exclusive lock on path until the returned function is
// called, waiting for it as long as it takes (for short, local work).
func LockFile(path string) (func(), error) {
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
