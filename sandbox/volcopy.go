package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/dockercli"
)

// roleCopy is the dev.litterbox.managed label of a short-lived container
// that copies one volume into another.
const roleCopy = "copy"

// copyStats is what the helper's copy reports.
type copyStats struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
}

// copyVolume copies the volume from into the volume to, inside the engine:
// a container that mounts both (from read-only) runs the helper's copy, so
// nothing passes through this machine. It runs as root with only the
// capabilities a `cp -a` needs, on no network, from the helper alone: the
// image (any image already here) lends nothing but a root file system.
//
// skip, when set, holds NUL-separated paths (relative to the volume's
// root) the copy leaves out, with everything under them.
func (m *Manager) copyVolume(ctx context.Context, image, from, to, slug string, skip io.Reader) (copyStats, error) {
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := "litterbox-" + m.RepoSlug + "-" + m.RepoID + ".copy-" + hex.EncodeToString(rnd[:])
	h := m.helper
	spec := dockercli.ContainerSpec{
		Name:        name,
		Image:       image,
		Labels:      m.labels(slug, roleCopy),
		User:        "0:0",
		ReadOnly:    true,
		AnonVolumes: []string{HelperDir},
		Shared: []dockercli.SharedVolume{
			{Volume: from, Target: "/from", ReadOnly: true},
			{Volume: to, Target: "/to"},
		},
		CapDrop:     []string{"ALL"},
		CapAdd:      []string{"CHOWN", "FOWNER", "DAC_OVERRIDE"},
		SecurityOpt: []string{"no-new-privileges"},
		Network:     "none",
		OpenStdin:   true,
		Entrypoint:  h.argv()[0],
		Cmd:         h.argv("copy", "/from", "/to")[1:],
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = m.Provider.Remove(ctx, name)
	}()
	if _, err := m.Provider.Create(ctx, spec); err != nil {
		return copyStats{}, err
	}
	if err := m.deliverHelper(ctx, name, h); err != nil {
		return copyStats{}, err
	}
	if skip == nil {
		skip = strings.NewReader("")
	}
	res, err := m.Provider.StartAttached(ctx, name, skip)
	if err != nil {
		return copyStats{}, fmt.Errorf("copying volume %s into %s: %w", from, to, err)
	}
	var st copyStats
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &st); err != nil {
		return copyStats{}, fmt.Errorf("copying volume %s into %s: unexpected report %q", from, to, res.Stdout)
	}
	return st, nil
}
