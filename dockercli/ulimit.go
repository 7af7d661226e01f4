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
