package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// cpioReader reads a cpio archive in the "newc" format, which busybox writes
// (its tar cannot read a file list; cpio -o can). It stops after the
// TRAILER!!! entry and leaves the rest of the stream unread.
type cpioReader struct {
	r       *bufio.Reader
	remain  int64 // data bytes of the current entry not read yet
	pad     int   // padding after the current entry's data
	done    bool
	maxName int
}

type cpioHeader struct {
	Name string
	Mode uint32 // full st_mode: type and permission bits
	Size int64
}

func newCpioReader(r *bufio.Reader) *cpioReader { return &cpioReader{r: r, maxName: 4096} }

const (
	cpioTypeMask = 0o170000
	cpioRegular  = 0o100000
	cpioSymlink  = 0o120000
	cpioDir      = 0o040000
)

// Next advances to the next entry, returning io.EOF after the trailer.
func (c *cpioReader) Next() (*cpioHeader, error) {
	if c.done {
		return nil, io.EOF
	}
	if _, err := c.r.Discard(int(c.remain) + c.pad); err != nil {
		return nil, unexpected(err)
	}
	c.remain, c.pad = 0, 0
	var hdr [110]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, unexpected(err)
	}
	if string(hdr[:6]) != "070701" && string(hdr[:6]) != "070702" {
		return nil, fmt.Errorf("cpio: bad magic %q", hdr[:6])
	}
	field := func(i int) (int64, error) {
		v, err := strconv.ParseUint(string(hdr[6+8*i:14+8*i]), 16, 32)
		return int64(v), err
	}
	mode, err1 := field(1)
	size, err2 := field(6)
	nameSize, err3 := field(11)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("cpio: bad header: %w", err)
	}
	if nameSize < 1 || nameSize > int64(c.maxName) {
		return nil, fmt.Errorf("cpio: bad name size %d", nameSize)
	}
	name := make([]byte, nameSize)
	if _, err := io.ReadFull(c.r, name); err != nil {
		return nil, unexpected(err)
	}
	if name[nameSize-1] != 0 {
		return nil, errors.New("cpio: name not NUL-terminated")
	}
	if _, err := c.r.Discard(pad4(110 + int(nameSize))); err != nil {
		return nil, unexpected(err)
	}
	h := &cpioHeader{Name: string(name[:nameSize-1]), Mode: uint32(mode), Size: size}
	if h.Name == "TRAILER!!!" {
		c.done = true
		return nil, io.EOF
	}
	c.remain, c.pad = size, pad4(int(size%4))
	return h, nil
}

// Read reads the current entry's data.
func (c *cpioReader) Read(p []byte) (int, error) {
	if c.remain == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > c.remain {
		p = p[:c.remain]
	}
	n, err := c.r.Read(p)
	c.remain -= int64(n)
	if err == io.EOF && c.remain > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

func pad4(n int) int { return (4 - n%4) % 4 }

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
