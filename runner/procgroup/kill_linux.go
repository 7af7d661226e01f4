package procgroup

import (
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// killMarked kills process pid if it still carries marker. After a fork
// bomb the sandbox's pids wrap within seconds (pid_max is often 32768), so
// a pid read a moment ago may now be another process's, or a thread of
// the helper's own, which kill(2) would end whole. A pidfd pins the
// process: it is opened first, the marker checked after, and the signal
// goes to that process or to none. pidfd_open refuses a thread.
func killMarked(pid int, marker string) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ENOSYS {
		killUnpinned(pid, marker)
		return
	}
	if err != nil {
		return // gone, or a thread
	}
	defer unix.Close(fd)
	if !hasMarker(pid, marker) {
		return
	}
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

// killUnpinned is killMarked on a kernel before 5.3: it checks again that
// pid is no thread of this process, which narrows the race to nothing
// likely.
func killUnpinned(pid int, marker string) {
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(pid)); err == nil || !hasMarker(pid, marker) {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}
