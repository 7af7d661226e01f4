//go:build linux

package helper

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helper/watch"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// idleStop ends the sandbox (PID 1 exits with IdleExit, so the engine
// stops the container) once idle has passed with no call asked, no call
// running and no CPU used by any of its processes. A service that computes
// keeps it up; one that only waits for connections does not. The files
// stay on the volumes, and the next call starts the sandbox again.
func idleStop(w *watch.Watcher, idle time.Duration) {
	tick := min(idle/4, 30*time.Second)
	last, asked := time.Now(), w.Asked()
	cpu, _ := sandboxCPU()
	for {
		time.Sleep(tick)
		nowCPU, calling := sandboxCPU()
		if a := w.Asked(); a != asked || calling || nowCPU != cpu {
			last, asked = time.Now(), a
		}
		cpu = nowCPU
		if time.Since(last) >= idle {
			os.Exit(protocol.IdleExit)
		}
	}
}

// sandboxCPU sums the CPU time (clock ticks) of the sandbox's processes but
// PID 1, and says whether a call's helper is running.
func sandboxCPU() (ticks uint64, calling bool) {
	for pid, p := range procgroup.ReadTable() {
		if pid == 1 {
			continue
		}
		ticks += p.CPU
		if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
			if args := bytes.Split(cmd, []byte{0}); len(args) > 1 && string(args[1]) == "act" {
				calling = true
			}
		}
	}
	return ticks, calling
}
