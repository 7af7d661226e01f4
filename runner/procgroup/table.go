package procgroup

import (
	"bytes"
	"strconv"
)

// Proc is one process as its /proc/PID/stat shows it.
type Proc struct {
	PID, PPID int
	// Start is the process's start time (field 22, clock ticks since
	// boot): with the pid, it names one process, never a recycled pid's
	// next owner.
	Start uint64
	// Zombie: the process is dead and waits to be reaped; no signal can
	// touch it.
	Zombie bool
	// Stopped: a signal stopped it (state T); SIGCONT continues it.
	Stopped bool
	// CPU is the time it ran, user and system (fields 14 and 15, clock
	// ticks).
	CPU uint64
}

// Table is a sandbox's process table, by pid.
type Table map[int]Proc

// ParseStat reads the contents of /proc/PID/stat. The command name (comm)
// may hold anything, spaces and ')' included, so the fields are read after
// its last ')'.
func ParseStat(data []byte) (Proc, bool) {
	open := bytes.IndexByte(data, '(')
	i := bytes.LastIndexByte(data, ')')
	if open < 1 || i < open {
		return Proc{}, false
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil {
		return Proc{}, false
	}
	f := bytes.Fields(data[i+1:])
	// f[0] is field 3 (state), f[1] field 4 (ppid), f[19] field 22.
	if len(f) < 20 {
		return Proc{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	start, err2 := strconv.ParseUint(string(f[19]), 10, 64)
	utime, err3 := strconv.ParseUint(string(f[11]), 10, 64)
	stime, err4 := strconv.ParseUint(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return Proc{}, false
	}
	return Proc{PID: pid, PPID: ppid, Start: start, Zombie: string(f[0]) == "Z", Stopped: string(f[0]) == "T", CPU: utime + stime}, true
}

// Strays returns the processes of now that belong to the call whose own
// process is self, given the table before the call started:
//
//   - a process that was there before the call (same pid, same start
//     time) is not the call's;
//   - PID 1 and self are never the call's to kill;
//   - of the new processes, those whose parent chain reaches self are the
//     call's, and so are those whose chain reaches PID 1: an orphan is
//     given to PID 1 (or to a subreaper among its own ancestors, which is
//     new and of the same tree), so a process cannot leave its tree by
//     starting a session, clearing its environment or double forking;
//   - a chain that ends at another root (a process whose parent is outside
//     the sandbox, ppid 0: another exec, such as a human's shell, a
//     service's monitor, another tool of the helper's) is that exec's.
//
// Calls that run commands take turns (the sandbox lock), so a new process
// under PID 1 is this call's, but for one that another exec's tree
// orphaned during the call: that one is killed too, the price of a rule
// that an escapee cannot dodge.
//
// orphanage is the pid orphans go to (1 in a sandbox), or 0 when the
// helper runs outside one (a unit test on a host, whose PID 1 adopts the
// whole machine's orphans): then only what descends from self is the
// call's.
//
// unsure is true when a chain broke (a parent died between the reads,
// its children not yet reparented): the caller reads the table again.
func Strays(before, now Table, self, orphanage int) (strays []Proc, unsure bool) {
	for _, p := range now {
		if p.PID == 1 || p.PID == self || p.Zombie {
			continue
		}
		if old, ok := before[p.PID]; ok && old.Start == p.Start {
			continue
		}
		switch reach(now, p, self, orphanage) {
		case reachCall:
			strays = append(strays, p)
		case reachBroken:
			unsure = true
		}
	}
	return strays, unsure
}

const (
	reachOther = iota
	reachCall
	reachBroken
)

// reach follows p's parent chain to the call (self or the orphanage),
// another root (ppid 0, or PID 1 outside a sandbox), or a break.
func reach(now Table, p Proc, self, orphanage int) int {
	for range len(now) + 1 {
		switch {
		case p.PPID == self || p.PPID == orphanage && orphanage > 0:
			return reachCall
		case p.PPID <= 1:
			return reachOther
		}
		parent, ok := now[p.PPID]
		if !ok {
			return reachBroken
		}
		p = parent
	}
	return reachBroken // a cycle: the reads raced with reparenting
}

// Descendants returns the live processes of t in roots or below one of
// them, but PID 1 and self.
func Descendants(t Table, roots []int, self int) []Proc {
	in := make(map[int]bool, len(roots))
	for _, r := range roots {
		in[r] = true
	}
	var out []Proc
	for _, p := range t {
		if p.PID == 1 || p.PID == self || p.Zombie {
			continue
		}
		q, ok := p, true
		for range len(t) + 1 {
			if !ok {
				break
			}
			if in[q.PID] {
				out = append(out, p)
				break
			}
			q, ok = t[q.PPID]
		}
	}
	return out
}
