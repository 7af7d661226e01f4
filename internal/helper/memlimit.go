package helper

import (
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// limitHeap keeps the helper's heap within a quarter of the sandbox's
// memory limit (its cgroup's), and its collector at the default pace
// whatever GOGC or GOMEMLIMIT the image's environment sets. The helper
// shares that limit with the agent's processes, with PID 1 (a helper too)
// and with the manifests it keeps in /tmp: a scan of 100k directories of
// 240-byte names held 525 MB at the default pace, about twice what it
// kept live, and the kernel killed it inside a 1 GiB sandbox. Under the
// soft limit the collector runs more often rather than let the heap grow
// past it; with no limit found it runs at the default pace alone.
func limitHeap() {
	debug.SetGCPercent(100)
	limit := int64(math.MaxInt64)
	if n, ok := cgroupMemoryLimit(); ok {
		limit = n / 4
	}
	debug.SetMemoryLimit(limit)
}

// cgroupFiles hold the memory limit of the cgroup the process is in, as
// an engine shows it inside a container: cgroup v2's, then v1's.
var cgroupFiles = []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}

// cgroupMemoryLimit is the first limit cgroupFiles give.
func cgroupMemoryLimit() (int64, bool) {
	for _, f := range cgroupFiles {
		if b, err := os.ReadFile(f); err == nil {
			return parseMemoryLimit(string(b))
		}
	}
	return 0, false
}

// parseMemoryLimit reads a cgroup's memory limit: v2's "max" and v1's
// page-rounded 2^63 stand for none.
func parseMemoryLimit(s string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0, false
	}
	return n, true
}
