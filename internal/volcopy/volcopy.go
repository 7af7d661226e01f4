// Package volcopy copies one volume into another inside the engine, through
// the sandbox helper in a short-lived container: nothing passes through
// this machine. The setup cache and fork are made of such copies.
package volcopy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// Stats is what the helper's copy reports.
type Stats struct {
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Moved counts the entries left out because the source's processes
	// removed, renamed or swapped them while the copy read them: a fork
	// of a running sandbox copies a tree that moves.
	Moved int `json:"moved"`
}

// Job is one copy between a sandbox's volumes (/src, its home, its kept
// paths) and other volumes.
type Job struct {
	// Sandbox is the container whose volumes the copy borrows, and its
	// helper, which so need not be delivered again.
	Sandbox string
	// Trees are what is copied; IntoSandbox says which way the files go.
	Trees       []Tree
	IntoSandbox bool
	// Skip, when set, holds NUL-separated paths (relative to the first
	// tree's root) left out, with everything under them.
	Skip io.Reader
	// Layer, when set, is a copy into the sandbox whose /src lies over
	// the same base tree as another's: only that one's own layer is
	// copied (see Layer).
	Layer *Layer
}

// Layer is a sandbox's /src over a base tree, by its volumes: its own
// upper layer, and the overlay of it over the tree (and a setup cache
// entry), which the sandbox the copy goes into lies over too.
type Layer struct {
	Upper, Merged string
}

// Tree pairs a directory of the sandbox with a directory of another
// volume: Sub of Volume ("" for its root).
type Tree struct {
	Dir    string
	Volume string
	Sub    string
}

// Copy runs a copy inside the engine: a container that mounts both
// sides (the source read-only) runs the helper's copy, so nothing passes
// through this machine. It runs as root with only the capabilities a
// `cp -a` needs, on no network, from the helper alone: the image lends
// nothing but a root file system.
func Copy(ctx context.Context, m *agent.Agent, image string, j Job) (Stats, error) {
	name := m.Repo.ScratchName("copy")
	h := m.Helper
	borrow := j.Sandbox
	if !j.IntoSandbox {
		borrow += ":ro"
	}
	var others []box.Mount
	at := map[string]string{} // volume -> where the copy mounts it
	mount := func(v string) string {
		if at[v] == "" {
			at[v] = "/other/" + strconv.Itoa(len(others))
			others = append(others, box.Mount{Volume: v, Target: at[v], ReadOnly: j.IntoSandbox})
		}
		return at[v]
	}
	var pairs []protocol.CopyPair
	for _, t := range j.Trees {
		p := protocol.CopyPair{From: path.Join(mount(t.Volume), t.Sub), To: t.Dir}
		if !j.IntoSandbox {
			p.From, p.To = p.To, p.From
		}
		pairs = append(pairs, p)
	}
	var cmd protocol.Command = protocol.CmdCopy{Pairs: pairs}
	if l := j.Layer; l != nil {
		cmd = protocol.CmdCopyLayer{Upper: mount(l.Upper), Merged: mount(l.Merged), To: hostrepo.Workdir, Pairs: pairs}
	}
	spec := box.Spec{
		Name:        name,
		Image:       image,
		Labels:      m.Repo.Labels("", hostrepo.RoleCopy),
		User:        "0:0",
		ReadOnly:    true,
		VolumesFrom: []string{borrow},
		Shared:      others,
		CapDrop:     []string{"ALL"},
		CapAdd:      []string{"CHOWN", "FOWNER", "DAC_OVERRIDE"},
		SecurityOpt: []string{"no-new-privileges"},
		Network:     "none",
		OpenStdin:   true,
		Entrypoint:  h.Argv(cmd)[0],
		Cmd:         h.Argv(cmd)[1:],
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_ = box.Of(m.Repo.Provider, name).Remove(ctx)
	}()
	if _, err := m.Repo.Provider.Create(ctx, spec); err != nil {
		return Stats{}, err
	}
	skip := j.Skip
	if skip == nil {
		skip = strings.NewReader("")
	}
	res, err := box.Copier(m.Repo.Provider).StartAttached(ctx, name, skip)
	if err != nil {
		return Stats{}, fmt.Errorf("copying %s: %w", j.describe(), err)
	}
	var st Stats
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &st); err != nil {
		return Stats{}, fmt.Errorf("copying %s: unexpected report %q", j.describe(), res.Stdout)
	}
	if st.Moved > 0 {
		logrus.Infof("copying %s: %d entries moved while they were read and were left out", j.describe(), st.Moved)
	}
	return st, nil
}

func (j Job) describe() string {
	var vols []string
	for _, t := range j.Trees {
		if !slices.Contains(vols, t.Volume) {
			vols = append(vols, t.Volume)
		}
	}
	if j.IntoSandbox {
		return "volume " + strings.Join(vols, ", ") + " into " + j.Sandbox
	}
	return j.Sandbox + " into volume " + strings.Join(vols, ", ")
}
