//go:build linux

package helper

import (
	"bytes"
	"os"
	"strconv"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/inotify"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// idleStop ends the sandbox (PID 1 exits with IdleExit, so the engine
// stops the container) once the idle clock says so.
func idleStop(w *inotify.Watcher, idle time.Duration) {
	tick := min(idle/4, 30*time.Second)
	cpu, _ := sandboxCPU()
	c := idleClock{idle: idle, last: time.Now(), cpu: cpu}
	for {
		time.Sleep(tick)
		cpu, calling := sandboxCPU()
		if c.idleAt(time.Now(), w.Asked(), cpu, calling) {
			os.Exit(protocol.IdleExit)
		}
	}
}

// idleClock tells when idle has passed with no call asked, no call
// running and no CPU used by any of the sandbox's processes. A service that
// computes keeps it up; one that only waits for connections does not.
//
// It starts at the first question asked after PID 1 starts: the host is
// still making the sandbox until then (create's steps before its setup
// call took over 10 s on a loaded machine, with nothing running inside),
// and each way a sandbox starts asks one at its end (the setup call, the
// call that woke it, resume's awake).
type idleClock struct {
	idle  time.Duration
	last  time.Time
	asked int64
	cpu   uint64
}

// idleAt reads the sandbox at now: asked questions so far, cpu ticks, and
// whether a call runs; it reports whether the sandbox has been idle long
// enough.
func (c *idleClock) idleAt(now time.Time, asked int64, cpu uint64, calling bool) bool {
	if asked == 0 || asked != c.asked || calling || cpu != c.cpu {
		c.last, c.asked = now, asked
	}
	c.cpu = cpu
	return now.Sub(c.last) >= c.idle
}

// sandboxCPU sums the CPU time (clock ticks) of the sandbox's processes but
// PID 1, and says whether a call's helper is running, or a `litterbox run`
// session's (whose agent may wait at a prompt for its person, using no CPU).
func sandboxCPU() (ticks uint64, calling bool) {
	for pid, p := range procgroup.ReadTable() {
		if pid == 1 {
			continue
		}
		ticks += p.CPU
		if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline"); err == nil {
			if args := bytes.Split(cmd, []byte{0}); len(args) > 1 && (string(args[1]) == "act" || string(args[1]) == "settle") {
				calling = true
			}
		}
	}
	return ticks, calling
}
