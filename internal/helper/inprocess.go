//go:build linux

package helper

import (
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/helper/manifest"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// inProcess serialises RunIn: the directories the helper works in are
// process-wide.
var inProcess sync.Mutex

// mapped turns a sandbox path into the directory RunIn put the sandbox in;
// in a container (fsRoot "") it is the path itself.
var fsRoot = ""

func mapped(p string) string {
	if fsRoot == "" || !path.IsAbs(p) {
		return p
	}
	return filepath.Join(fsRoot, filepath.FromSlash(p))
}

// RunIn runs the helper in this process, as if dir were the sandbox's
// filesystem root: /src is dir/src, the state and saved output live under
// dir/tmp, and a command runs on this machine in dir/src. It is how the
// in-memory provider (internal/box/membox) runs the real helper without an
// engine; only one call runs at a time. It returns the exit code Main would.
func RunIn(dir string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	inProcess.Lock()
	defer inProcess.Unlock()
	saved := [...]string{root, manifest.StateDir, outDir, fsRoot}
	defer func() { root, manifest.StateDir, outDir, fsRoot = saved[0], saved[1], saved[2], saved[3] }()
	fsRoot = dir
	root, manifest.StateDir, outDir = mapped(Root), mapped("/tmp/.litterbox"), mapped(OutDir)
	for i, a := range args {
		if strings.HasPrefix(a, "/") {
			args[i] = mapped(a)
		}
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, protocol.Usage)
		return protocol.ExitUsage
	}
	return exitOf(dispatch(args, stdin, stdout), stderr)
}

// exitOf is the exit code of dispatch's error, its message written to
// stderr.
func exitOf(err error, stderr io.Writer) int {
	var te *protocol.ToolError
	var ec exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ec):
		return int(ec)
	case errors.As(err, &te):
		fmt.Fprintln(stderr, te.Msg)
		return te.Code
	default:
		fmt.Fprintln(stderr, err)
		return 1
	}
}
