package dockercli

import (
	"maps"
	"strconv"
	"syscall"
)

// rlimitNproc is RLIMIT_NPROC on Linux, which package syscall does not name.
const rlimitNproc = 6

// podmanUlimit caps what podmanUlimits asks for: on the test machines runc
// refused nproc 50000 though the host's hard limit was 96365, and took 16384.
const podmanUlimit = 16384

// podmanUlimits fills in nofile and nproc. Podman (with runc) asks for limits
// above what a confined host allows and then cannot start anything, so it is
// given the host's hard limits, capped. Docker keeps its own defaults.
func podmanUlimits(set map[string]string) map[string]string {
	out := map[string]string{}
	maps.Copy(out, set)
	for name, res := range map[string]int{"nofile": syscall.RLIMIT_NOFILE, "nproc": rlimitNproc} {
		if _, ok := out[name]; ok {
			continue
		}
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(res, &rl); err != nil || rl.Max > podmanUlimit {
			rl.Max = podmanUlimit
		}
		v := strconv.FormatUint(rl.Max, 10)
		out[name] = v + ":" + v
	}
	return out
}

// gVisor's kernel runs as host threads in the container's cgroup, so the
// engine's pids limit counts them rather than the sandbox's processes:
// measured here on runsc's ptrace platform, about 80 in a sandbox at rest
// and 12-13 more for each process it runs. When that limit refuses gVisor
// one of its own threads the whole sandbox ends (gvisor#2490: a service
// starting under --pids-limit 128 did, and so did a fork bomb). gVisor's
// kernel does enforce RLIMIT_NPROC for the sandbox's own user, failing a
// fork with EAGAIN as Linux does, and under gVisor that count is the
// sandbox's alone (under runc it is shared with every container of the
// same uid). So under gVisor the sandbox's processes are bounded by
// RLIMIT_NPROC, and the engine's limit bounds gVisor's threads with room
// for that many processes.
const (
	gvisorThreadsPerProcess = 16
	gvisorThreadsAtRest     = 128
)

// gvisorPids is a spec's pids limit and ulimits under gVisor: pids
// processes as RLIMIT_NPROC, and the cgroup's limit sized for gVisor's
// threads.
func gvisorPids(pids int, ulimits map[string]string) (int, map[string]string) {
	out := map[string]string{}
	maps.Copy(out, ulimits)
	n := strconv.Itoa(pids)
	out["nproc"] = n + ":" + n
	return pids*gvisorThreadsPerProcess + gvisorThreadsAtRest, out
}
