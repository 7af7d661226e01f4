//go:build linux

package search

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"regexp"
	"strings"
	"syscall"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// The read-only tools take their arguments on the command line, so a logged
// `docker exec` of one is a command a human can paste, and print JSON (or the
// raw file, for cat); their exit codes are protocol.ExitUsage and the rest.

func Missing(p string) error {
	return &protocol.ToolError{Code: protocol.ExitMissing, Msg: p + ": no such file or directory"}
}

func StatTarget(p string, wantFile bool) (os.FileInfo, error) {
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := os.Lstat(p); lerr == nil {
			return nil, &protocol.ToolError{Code: 1, Msg: p + ": a symlink to nothing"}
		}
		return nil, Missing(p)
	}
	if err != nil {
		return nil, err
	}
	if wantFile && fi.IsDir() {
		return nil, &protocol.ToolError{Code: protocol.ExitIsDir, Msg: p + ": is a directory"}
	}
	return fi, nil
}

// cat writes the file at p, refusing one larger than max.
func Cat(w io.Writer, p string, max int64) error {
	fi, err := StatTarget(p, true)
	if err != nil {
		return err
	}
	if fi.Size() > max {
		return fmt.Errorf("%s: file larger than %d bytes", p, max)
	}
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, io.LimitReader(f, max))
	return err
}

// read returns up to limit lines from line offset (0-based), at most
// maxBytes of them, and counts the file's lines.
func Read(p string, offset, limit, maxBytes int) (*protocol.ReadOut, error) {
	fi, err := StatTarget(p, true)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	// As git and grep tell: a NUL in the first 8000 bytes is no text.
	head, _ := r.Peek(8000)
	if mime := http.DetectContentType(head); bytes.IndexByte(head, 0) >= 0 || strings.HasPrefix(mime, "image/") {
		return &protocol.ReadOut{Binary: true, MIME: mime, Size: fi.Size()}, nil
	}
	var b strings.Builder
	out := &protocol.ReadOut{}
	for {
		line, err := r.ReadString('\n')
		if line == "" && err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		n := out.TotalLines
		out.TotalLines++
		if n >= offset && n < offset+limit && b.Len() < maxBytes {
			b.WriteString(strings.TrimSuffix(line, "\n"))
			b.WriteByte('\n')
			out.Lines++
		}
	}
	out.Content = b.String()
	return out, nil
}

func TypeOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "file"
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "other"
}

// ls lists the entries under root (its children, or everything with
// recursive) whose names do not start with ".", paths relative to root; a
// root that is a file is listed by its own path. It stops after max.
func Ls(root string, recursive bool, max int) ([]protocol.LsEntry, error) {
	return list(root, recursive, max, func(string, fs.DirEntry) bool { return true })
}

// glob lists the files under root (not hidden) whose paths relative to
// root match pattern, up to max. Matching happens before the cut, so a
// match is found however many files do not match.
func Glob(root, pattern string, max int) ([]protocol.LsEntry, error) {
	if !doublestar.ValidatePattern(pattern) {
		return nil, &protocol.ToolError{Code: protocol.ExitUsage, Msg: "bad glob pattern: " + pattern}
	}
	match := globMatcher(pattern)
	return list(root, true, max, func(rel string, d fs.DirEntry) bool {
		return isFile(d) && match(rel, d.Name())
	})
}

// isFile: what glob lists, a regular file or a symlink.
func isFile(d fs.DirEntry) bool { return d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 }

// list lists the entries under root that keep takes, up to max; a root
// that is a file is judged by its base name and listed by its own path.
func list(root string, recursive bool, max int, keep func(rel string, d fs.DirEntry) bool) ([]protocol.LsEntry, error) {
	fi, err := os.Lstat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Missing(root)
	}
	if err != nil {
		return nil, err
	}
	out := []protocol.LsEntry{}
	if !fi.IsDir() {
		if keep(path.Base(root), fs.FileInfoToDirEntry(fi)) {
			out = append(out, protocol.LsEntry{Path: root, Type: TypeOf(fi.Mode()), Size: fi.Size()})
		}
		return out, nil
	}
	err = visit(root, recursive, func(rel string, d fs.DirEntry) error {
		if !keep(rel, d) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		out = append(out, protocol.LsEntry{Path: rel, Type: TypeOf(info.Mode()), Size: info.Size()})
		if len(out) >= max {
			return errStop
		}
		return nil
	})
	return out, err
}

var errStop = errors.New("stop")

// visit calls fn for every entry under root not hidden, skipping hidden
// directories whole.
func visit(root string, recursive bool, fn func(rel string, d fs.DirEntry) error) error {
	fd, err := openAt(atFDCWD, root, syscall.O_DIRECTORY)
	if err != nil {
		return &fs.PathError{Op: "open", Path: root, Err: err}
	}
	defer rawClose(fd)
	err = walkTree(fd, root, "", recursive, fn)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// grep finds the lines matching re in the non-hidden files under root
// whose names match include, up to max; binary files are skipped.
func Grep(root, pattern, include string, max int) ([]protocol.Match, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, &protocol.ToolError{Code: protocol.ExitUsage, Msg: "bad pattern: " + err.Error()}
	}
	if !doublestar.ValidatePattern(include) {
		return nil, &protocol.ToolError{Code: protocol.ExitUsage, Msg: "bad include pattern: " + include}
	}
	fi, err := os.Stat(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Missing(root)
	}
	if err != nil {
		return nil, err
	}
	m := newLineMatcher(re)
	if !fi.IsDir() {
		out, _ := m.searchFile(atFDCWD, root, root, []protocol.Match{}, max, make([]byte, 64<<10))
		return out, nil
	}
	fd, err := openAt(atFDCWD, root, syscall.O_DIRECTORY)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: root, Err: err}
	}
	defer rawClose(fd)
	return m.grepTree(fd, root, func(name string) bool {
		ok, _ := doublestar.Match(include, name)
		return ok
	}, max)
}
