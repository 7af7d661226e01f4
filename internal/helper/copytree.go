//go:build linux

package helper

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/manifest"
)

// CopyStats is what `copy` prints: the host keeps it as a cache entry's
// size, which no cheap engine call would tell.
type CopyStats struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Moved counts the entries left out because the source's processes
	// removed, renamed or swapped them while the copy read them.
	Moved int `json:"moved,omitempty"`
}

// add sums two copies' counts.
func (s CopyStats) add(o CopyStats) CopyStats {
	return CopyStats{Files: s.Files + o.Files, Bytes: s.Bytes + o.Bytes, Moved: s.Moved + o.Moved}
}

// copyTree copies the tree under from into the existing directory to, the
// way `cp -a` does: modes, owners (where the caller may chown), symlinks and
// modification times, hard links as separate files. It runs in a
// short-lived container that mounts both volumes, so a setup cache or a fork
// is copied inside the engine rather than streamed through the host.
// Sockets, fifos and devices are left out: no tool leaves one in /src that
// a copy could use.
//
// skip holds paths relative to from that are left out, with everything
// under them: a setup cache keeps only what setup added to the tracked
// files.
func copyTree(from, to string, skip map[string]bool) (CopyStats, error) {
	return walkCopy(from, func(c *copies, rel string, info fs.FileInfo) error {
		if skip[rel] {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		return c.entry(rel, filepath.Join(to, rel), info)
	})
}

// copies is one copy's state while walkCopy walks: the source's root,
// its copiers, the directories whose modes and times are set last, and
// the count.
type copies struct {
	*copiers
	src  *os.Root
	dirs []dirTimes
	st   CopyStats
}

// walkCopy walks from, calling each with every entry (its path relative
// to from, its metadata), then waits for the files each queued and gives
// the directories their modes and times. The first error stops the walk;
// each may return filepath.SkipDir.
//
// The source is read through an os.Root: what a copy reads may be
// changed under it by the sandbox it comes from (a process of a fork's
// source that swaps a directory for a link to / between the listing and
// the reading), and no link, at any component, may take the copy out of
// from and into the copy container's own files. An entry that moved so
// is left out (see moved); any other failure stops the copy.
func walkCopy(from string, each func(c *copies, rel string, info fs.FileInfo) error) (CopyStats, error) {
	src, err := os.OpenRoot(from)
	if err != nil {
		return CopyStats{}, err
	}
	defer src.Close()
	c := &copies{copiers: startCopiers(src), src: src}
	err = fs.WalkDir(src.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if err != nil {
			// A directory whose listing failed, already made in to.
			return c.leftOut(rel, d, err)
		}
		if err := c.failed(); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return c.leftOut(rel, d, err)
		}
		return each(c, rel, info)
	})
	counts, copyErr := c.wait()
	c.st = c.st.add(counts)
	if err == nil {
		err = copyErr
	}
	if err != nil {
		return c.st, err
	}
	return c.st, finishDirs(c.dirs)
}

// entry copies rel, an entry of the walk, to dst: a directory is made (its
// mode and times are set last, by finishDirs), a link copied as a link, a
// regular file queued and counted; sockets, fifos and devices are left
// out.
func (c *copies) entry(rel, dst string, info fs.FileInfo) error {
	switch mode := info.Mode(); {
	case mode.IsDir():
		if err := os.Mkdir(dst, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		c.dirs = append(c.dirs, dirTimes{dst, info})
		return nil
	case mode&fs.ModeSymlink != 0:
		target, err := c.src.Readlink(rel)
		if err != nil {
			return c.leftOut(rel, fs.FileInfoToDirEntry(info), err)
		}
		if err := os.Symlink(target, dst); err != nil {
			return err
		}
		keepOwner(dst, info, true)
	case mode.IsRegular():
		c.jobs <- copyJob{rel, dst, info} // the copier counts it
		return nil
	default:
		return nil
	}
	c.st.Files++
	return nil
}

// leftOut is what becomes of err, a failure to read the entry rel that
// the walk found as d (nil when the walk's root could not be read): nil,
// and the entry counted as moved, when it is gone or of another kind now,
// else err. The source is a live sandbox's, whose processes may remove,
// rename or swap an entry between the listing and the reading; a copy
// made a moment later would not have found it as it was either.
func (c *copiers) leftOut(rel string, d fs.DirEntry, err error) error {
	if d == nil || !c.moved(rel, d.Type()) {
		return err
	}
	c.mu.Lock()
	c.counts.Moved++
	c.mu.Unlock()
	if d.IsDir() {
		return fs.SkipDir
	}
	return nil
}

// moved reports whether the entry rel, of kind typ when it was listed, is
// gone, of another kind, or out of reach (a directory on its path swapped
// for a link out of the source) now.
func (c *copiers) moved(rel string, typ fs.FileMode) bool {
	fi, err := c.src.Lstat(rel)
	return err != nil || fi.Mode().Type() != typ.Type()
}

// copiers copy regular files on copyWorkers goroutines: on small files
// the time goes to metadata calls that wait on the disk, which overlap
// well. The first error stops the walk that feeds them.
type copiers struct {
	src    *os.Root
	jobs   chan copyJob
	wg     sync.WaitGroup
	mu     sync.Mutex
	counts CopyStats
	err    error
}

type copyJob struct {
	src, dst string
	info     fs.FileInfo
}

func startCopiers(src *os.Root) *copiers {
	c := &copiers{src: src, jobs: make(chan copyJob, 64)}
	for range copyWorkers {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for j := range c.jobs {
				c.copy(j)
			}
		}()
	}
	return c
}

// copy copies one queued file and counts it, or what became of it.
func (c *copiers) copy(j copyJob) {
	in, err := manifest.OpenRegularIn(c.src, j.src)
	if err != nil {
		if err = c.leftOut(j.src, fs.FileInfoToDirEntry(j.info), err); err == nil {
			return
		}
	}
	var n int64
	if in != nil {
		n, err = copyOpened(in, j.dst, j.info)
		in.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts.Bytes += n
	if err == nil {
		c.counts.Files++
	} else if c.err == nil {
		c.err = err
	}
}

func (c *copiers) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// wait ends the copies once the queued ones are done: the files and
// bytes they copied, the entries left out, and the first error.
func (c *copiers) wait() (CopyStats, error) {
	close(c.jobs)
	c.wg.Wait()
	return c.counts, c.err
}

// finishDirs gives the directories their modes and times, last: writing
// into a directory moves its time, and a read-only one would refuse its
// own entries.
func finishDirs(dirs []dirTimes) error {
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		keepOwner(d.path, d.info, false)
		if err := os.Chmod(d.path, d.info.Mode().Perm()|d.info.Mode()&(fs.ModeSticky|fs.ModeSetgid)); err != nil {
			return err
		}
		_ = os.Chtimes(d.path, time.Time{}, d.info.ModTime())
	}
	return nil
}

// copyWorkers is how many files copyTree copies at once.
const copyWorkers = 8

type dirTimes struct {
	path string
	info fs.FileInfo
}

// copyOpened copies in, opened as a regular file, to dst, new.
func copyOpened(in *os.File, dst string, info fs.FileInfo) (int64, error) {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	// ReadFrom between two files is copy_file_range on Linux: the data
	// need not pass through this process.
	n, err := out.ReadFrom(in)
	if err == nil {
		keepOwner(dst, info, false)
		err = out.Chmod(info.Mode().Perm() | info.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(dst, time.Time{}, info.ModTime())
	}
	return n, err
}

// keepOwner gives dst the owner of the original where the process may
// (root with CAP_CHOWN in the copy container); elsewhere the copier's own
// user owns it, which is the sandbox user's in every other use.
func keepOwner(dst string, info fs.FileInfo, link bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if link {
		_ = os.Lchown(dst, int(st.Uid), int(st.Gid))
		return
	}
	_ = os.Chown(dst, int(st.Uid), int(st.Gid))
}
