package agent

import (
	"fmt"

	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
)

// DiskFullError refuses a write while /src is over its disk guard.
type DiskFullError struct {
	Name string
	result.DiskOver
}

func (e *DiskFullError) Error() string {
	return fmt.Sprintf("sandbox '%s' holds %s in /src and its home, over its limit of %s ([docker] disk): writes are refused until files are removed (bash: rm ...) or the limit is raised in .litterbox.local.toml", e.Name, result.HumanSize(e.Used), result.HumanSize(e.Limit))
}

// diskOver reports /src over the disk guard, by the helper's last count.
func diskOver(st *snapshot.State, lim layout.Limits) *result.DiskOver {
	if used := int64(min(st.Used(), 1<<62)); used > lim.Disk {
		return &result.DiskOver{Used: used, Limit: lim.Disk}
	}
	return nil
}
