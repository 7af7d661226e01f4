//go:build linux

package helper

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// OutDir is where a command's output stream longer than the request's cap
// is saved whole, for the agent to grep or read: the result shows only its
// head and tail.
const OutDir = "/tmp/litterbox/out"

// outDir is OutDir, which unit tests point at a temp dir.
var outDir = OutDir

// Bounds on the saved output, which lives in /tmp, a tmpfs the sandbox's
// memory pays for: each file keeps at most maxSaved bytes, and only the
// files of the last keepSaved streams stay.
const (
	maxSaved  = 32 << 20
	keepSaved = 20
)

// capture is one output stream of a command as the helper forwards it:
// the head (the first half of the cap) is sent as it comes and kept for
// the saved file, the tail (the last half) is kept until the end, and once
// the stream outgrows the cap all of it goes to a file in outDir.
type capture struct {
	half    int // the head's size
	tailMax int // the tail's: what the cap leaves
	head    []byte
	tail    []byte // the bytes past the head; the last tailMax of them count
	total   uint64
	name    string // the file's name, given when the stream needs one
	file    *os.File
	saved   uint64
	failed  bool // the file could not be made or written
}

func newCapture(capBytes uint64, name string) *capture {
	c := int(min(capBytes, 1<<30))
	return &capture{half: c / 2, tailMax: c - c/2, name: name}
}

// add takes the next chunk of the stream and returns the part of it that
// belongs to the head, which the caller sends at once.
func (c *capture) add(p []byte) (head []byte) {
	c.total += uint64(len(p))
	if n := min(c.half-len(c.head), len(p)); n > 0 {
		c.head = append(c.head, p[:n]...)
		head, p = p[:n], p[n:]
	}
	if len(p) == 0 {
		return head
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) <= c.tailMax {
		return head
	}
	if c.file == nil && !c.failed {
		c.open()
		c.save(c.head)
		c.save(c.tail)
	} else {
		c.save(p)
	}
	if len(c.tail) > 2*c.tailMax {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.tailMax:]...)
	}
	return head
}

// end returns the tail to send after the head and how many bytes of the
// stream lie between them.
func (c *capture) end() (tail []byte, cut uint64) {
	if c.file != nil {
		if err := c.file.Close(); err != nil {
			c.failed = true
		}
	}
	tail = c.tail[max(len(c.tail)-c.tailMax, 0):]
	return tail, c.total - uint64(len(c.head)) - uint64(len(tail))
}

// savedAs names the file holding the stream, "" when none does, and
// whether it holds only the stream's start.
func (c *capture) savedAs() (path string, part bool) {
	if c.file == nil || c.failed {
		return "", false
	}
	return c.file.Name(), c.saved < c.total
}

func (c *capture) open() {
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		c.failed = true
		return
	}
	pruneSaved(outDir, keepSaved-1)
	// O_EXCL and O_NOFOLLOW: a name that exists (planted, say) is not
	// written through.
	f, err := os.OpenFile(filepath.Join(outDir, c.name), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		c.failed = true
		return
	}
	c.file = f
}

func (c *capture) save(p []byte) {
	if c.file == nil || c.failed {
		return
	}
	n := min(uint64(len(p)), maxSaved-c.saved)
	if n == 0 {
		return
	}
	if _, err := c.file.Write(p[:n]); err != nil {
		c.failed = true
		return
	}
	c.saved += n
}

// pruneSaved removes the oldest saved streams of dir until keep are left.
// Names start with the time they were made, so they sort oldest first.
func pruneSaved(dir string, keep int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && (strings.HasSuffix(e.Name(), ".stdout") || strings.HasSuffix(e.Name(), ".stderr")) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	for _, n := range names[:max(len(names)-keep, 0)] {
		_ = os.Remove(filepath.Join(dir, n))
	}
}
