//go:build linux

package helper

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// sizedWait bounds sized's wait for a size; a terminal that never gets
// one (a client that sends none) still runs the command.
const sizedWait = 2 * time.Second

// exitNotFound is a shell's status for a command it cannot find.
const exitNotFound = 127

// sized replaces itself with cmd once the terminal on stdin has a size.
// `docker exec -t` starts the command before the client sets the size,
// which reads 0x0 until then (measured: busybox's `stty size` failed on 6
// runs of 6 here, raw docker too), and an agent that lays out its screen
// for the width it reads at start would lay it out for none.
func sized(cmd []string) error {
	for deadline := time.Now().Add(sizedWait); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ)
		if err != nil || ws.Col > 0 && ws.Row > 0 {
			break // not a terminal, or one with a size
		}
	}
	if err := procgroup.Replace(cmd, "", os.Environ()); err != nil {
		if procgroup.NotFound(err) {
			return &protocol.ToolError{Code: exitNotFound, Msg: fmt.Sprintf("litterbox: %s is not in the sandbox (not found in its PATH, %s): install it in the sandbox's image", cmd[0], os.Getenv("PATH"))}
		}
		return &protocol.ToolError{Code: exitNotFound, Msg: fmt.Sprintf("litterbox: %s: %v", cmd[0], err)}
	}
	return nil
}
