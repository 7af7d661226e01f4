package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// endPoll is how often the state of a gVisor sandbox is read while an exec
// into it runs.
const endPoll = 2 * time.Second

// watchesEnd reports whether execs into the sandbox of rec need watchEnd:
// under runc an exec ends with the container's PID 1, but under gVisor an
// exec into a sandbox whose kernel ended (out of memory: the host's OOM
// killer takes gVisor's kernel with the sandbox's memory; or a thread the
// pids limit refused it) never returns: runsc's wait reads EOF and docker
// exec waits on (measured here with a memory bomb: 60 s, then killed).
func watchesEnd(rec *layout.Record) bool {
	return rec != nil && rec.Isolation == config.IsolationGVisor
}

// watchEnd reads the sandbox's state every endPoll until stop is called,
// and cuts the exec with an *EndedError once the sandbox is neither running
// nor paused.
func (m *Agent) watchEnd(ctx context.Context, slug string, cut func(error)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		t := time.NewTicker(endPoll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			in, err := m.Repo.Box(slug).Inspect(ctx)
			if err != nil || in.State == "running" || in.State == "paused" {
				continue
			}
			cut(&EndedError{Slug: slug, Container: m.Repo.Names(slug).Container, ExitCode: in.ExitCode})
			return
		}
	}()
	return cancel
}

// EndedError is a call cut short because its sandbox ended under it.
type EndedError struct {
	Slug, Container string
	ExitCode        int
}

func (e *EndedError) Error() string {
	why := fmt.Sprintf("its first process exited with %d", e.ExitCode)
	if e.ExitCode == 137 {
		why = "it was killed (exit 137), most likely for passing its memory limit, which under gVisor ends the whole sandbox"
	}
	return fmt.Sprintf("sandbox '%s' ended during the call: %s (docker logs %s says more); its work is on the branch up to the last call: litterbox resume %s", e.Slug, why, e.Container, e.Slug)
}
