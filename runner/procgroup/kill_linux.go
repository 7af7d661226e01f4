package procgroup

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// ReadTable reads the process table of this process's PID namespace: a
// sandbox's, seen from its helper.
func ReadTable() Table {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	t := make(Table, len(stats))
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		if p, ok := ParseStat(data); ok {
			t[p.PID] = p
		}
	}
	return t
}

// startOf is the start time of the process now at pid, false when none.
func startOf(pid int) (uint64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	p, ok := ParseStat(data)
	return p.Start, ok && !p.Zombie
}

// killProc kills process p, if it still is p. After a fork bomb the
// sandbox's pids wrap within seconds (pid_max is often 32768), so a pid read
// a moment ago may now be another process's, or a thread of the helper's
// own, which kill(2) would end whole. A pidfd pins the process: it is opened
// first, its start time checked after, and the signal goes to that process
// or to none (a pidfd of a process that died meanwhile refuses it).
// pidfd_open refuses a thread.
func killProc(p Proc) {
	fd, err := unix.PidfdOpen(p.PID, 0)
	if err == unix.ENOSYS {
		killUnpinned(p)
		return
	}
	if err != nil {
		return // gone, or a thread
	}
	defer unix.Close(fd)
	if start, ok := startOf(p.PID); !ok || start != p.Start {
		return
	}
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}

// killUnpinned is killProc on a kernel before 5.3: it checks again that
// the pid is no thread of this process and still has p's start time, which
// narrows the race to nothing likely.
func killUnpinned(p Proc) {
	if _, err := os.Stat("/proc/self/task/" + strconv.Itoa(p.PID)); err == nil {
		return
	}
	if start, ok := startOf(p.PID); !ok || start != p.Start {
		return
	}
	_ = syscall.Kill(p.PID, syscall.SIGKILL)
}

// hasMarker reports whether process pid's environment holds marker. A
// zombie's environ reads empty.
func hasMarker(pid int, marker string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	want := []byte(marker + "\x00")
	return err == nil && (bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)))
}
