//go:build linux

package helper

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/tarstream"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// maxEnvBlock bounds the environment withEnv reads: the host sends it, but
// a bound costs nothing.
const maxEnvBlock = 1 << 20

// withEnv runs a command with an environment and a working directory, for
// an engine whose exec has neither (kubectl exec): c.Cmd runs in c.Dir
// (when not empty), detached with c.Detach, with c.Env, and, with
// c.Secrets, with the pairs the host sends first on stdin (a decimal
// length, a newline, then NUL-separated NAME=VALUE), so no secret is in any
// argv. Everything after that block on stdin is the command's.
func withEnv(c protocol.CmdWithEnv, stdin *os.File) error {
	env := append(os.Environ(), c.Env...)
	if c.Secrets {
		n, err := readLength(stdin)
		if err != nil {
			return err
		}
		block := make([]byte, n)
		if _, err := io.ReadFull(stdin, block); err != nil {
			return fmt.Errorf("reading the environment: %w", err)
		}
		for _, kv := range bytes.Split(block, []byte{0}) {
			if len(kv) > 0 {
				env = append(env, string(kv))
			}
		}
	}
	if c.Detach {
		return procgroup.Spawn(c.Cmd, c.Dir, env)
	}
	return procgroup.Replace(c.Cmd, c.Dir, env)
}

// readLength reads "N\n" a byte at a time, so nothing after it is taken
// from the stdin the command inherits.
func readLength(r io.Reader) (int, error) {
	var digits []byte
	b := make([]byte, 1)
	for len(digits) <= 8 {
		if _, err := io.ReadFull(r, b); err != nil {
			return 0, fmt.Errorf("reading the environment's length: %w", err)
		}
		if b[0] == '\n' {
			n, err := strconv.Atoi(string(digits))
			if err != nil || n < 0 || n > maxEnvBlock {
				break
			}
			return n, nil
		}
		digits = append(digits, b[0])
	}
	return 0, errors.New("malformed environment length")
}

// untar extracts the tar stream r into dir as the helper's user, as `docker
// cp -` does where the engine has no copy (kubernetes): directories, regular
// files and symlinks with their permission bits and times; the root entry
// and owners are not applied. Names must be plain relative paths, and every
// entry is written by tarstream.WriteEntry inside an os.Root of dir, so a
// link the sandbox holds can neither be written through nor lead outside
// dir.
func untar(dir string, r io.Reader) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(filepath.Clean("/"+h.Name), "/")
		if name == "" {
			continue
		}
		if h.Name != name && h.Name != name+"/" && h.Name != "./"+name && h.Name != "./"+name+"/" {
			return fmt.Errorf("tar entry %q is not a plain relative path", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir, tar.TypeReg, tar.TypeSymlink:
		default:
			return fmt.Errorf("tar entry %q: type %q is not copied", h.Name, h.Typeflag)
		}
		if err := tarstream.WriteEntry(root, name, h, tr); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeSymlink {
			_ = root.Chtimes(name, h.ModTime, h.ModTime)
		}
	}
}
