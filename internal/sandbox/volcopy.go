package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// copyStats is what the helper's copy reports.
type copyStats struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// copyJob is one copy between a sandbox's /src and another volume.
type copyJob struct {
	// sandbox is the container whose volumes the copy borrows: its /src,
	// and its helper, which so need not be delivered again.
	sandbox string
	// volume is the other side; intoSandbox says which way the files go.
	volume      string
	intoSandbox bool
	// skip, when set, holds NUL-separated paths (relative to the copied
	// root) left out, with everything under them.
	skip io.Reader
}

// copyVolume runs a copy inside the engine: a container that mounts both
// sides (the source read-only) runs the helper's copy, so nothing passes
// through this machine. It runs as root with only the capabilities a
// `cp -a` needs, on no network, from the helper alone: the image lends
// nothing but a root file system.
func (m *Manager) copyVolume(ctx context.Context, image string, j copyJob) (copyStats, error) {
	name := m.ScratchName("copy")
	h := m.Helper
	from, to := "/other", hostrepo.Workdir
	borrow := j.sandbox
	other := box.SharedVolume{Volume: j.volume, Target: "/other", ReadOnly: true}
	if !j.intoSandbox {
		from, to = hostrepo.Workdir, "/other"
		borrow += ":ro"
		other.ReadOnly = false
	}
	spec := box.Spec{
		Name:        name,
		Image:       image,
		Labels:      m.Labels("", hostrepo.RoleCopy),
		User:        "0:0",
		ReadOnly:    true,
		VolumesFrom: []string{borrow},
		Shared:      []box.SharedVolume{other},
		CapDrop:     []string{"ALL"},
		CapAdd:      []string{"CHOWN", "FOWNER", "DAC_OVERRIDE"},
		SecurityOpt: []string{"no-new-privileges"},
		Network:     "none",
		OpenStdin:   true,
		Entrypoint:  h.Argv(protocol.CmdCopy{From: from, To: to})[0],
		Cmd:         h.Argv(protocol.CmdCopy{From: from, To: to})[1:],
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = m.Provider.Remove(ctx, name)
	}()
	if _, err := m.Provider.Create(ctx, spec); err != nil {
		return copyStats{}, err
	}
	skip := j.skip
	if skip == nil {
		skip = strings.NewReader("")
	}
	res, err := box.Copier(m.Provider).StartAttached(ctx, name, skip)
	if err != nil {
		return copyStats{}, fmt.Errorf("copying %s: %w", j.describe(), err)
	}
	var st copyStats
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &st); err != nil {
		return copyStats{}, fmt.Errorf("copying %s: unexpected report %q", j.describe(), res.Stdout)
	}
	return st, nil
}

func (j copyJob) describe() string {
	if j.intoSandbox {
		return "volume " + j.volume + " into " + j.sandbox
	}
	return j.sandbox + " into volume " + j.volume
}
