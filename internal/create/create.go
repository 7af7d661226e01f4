package create

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/egress"
	"github.com/litterbox-dev/litterbox/internal/egressproxy"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/ports"
	"github.com/litterbox-dev/litterbox/internal/preflight"
	"github.com/litterbox-dev/litterbox/internal/projectimage"
	"github.com/litterbox-dev/litterbox/internal/services"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
	"github.com/litterbox-dev/litterbox/runner"
)

// ContainerSpec is the sandbox's container. Its PID 1 is the helper (init:
// it reaps orphans and ignores the signals the sandbox user may send it;
// the container ends by SIGKILL from outside), so the image needs nothing,
// not even a shell.
func (m *Creator) ContainerSpec(n hostrepo.Names, base string, c config.Config, pmap []ports.Port, h *helperbin.Binary) box.Spec {
	// GOMODCACHE: the golang images set GOPATH=/go, on the read-only root.
	env := map[string]string{"HOME": config.Home, "GOMODCACHE": config.Home + "/go/pkg/mod", "LITTERBOX_SANDBOX": n.Slug}
	maps.Copy(env, c.Env)
	maps.Copy(env, ports.Env(pmap))
	var shared []box.Mount
	var allow []string
	if m.Proxies().Proxied(c) {
		maps.Copy(env, egressproxy.Env())
		if len(c.Injected()) > 0 {
			// The proxy's CA, for the hosts of the secrets it injects.
			maps.Copy(env, egress.TrustEnv(protocol.EgressDir))
		}
		shared = append(shared, box.Mount{Volume: n.Egress(), Target: protocol.EgressDir, ReadOnly: true})
	} else if egressproxy.Used(c) {
		allow = c.Allow // the pod's NetworkPolicy
	}
	labels := m.Repo.Labels(n.Slug, "true")
	labels[hostrepo.LabelBase] = base
	if len(pmap) > 0 {
		labels[LabelPorts] = ports.Label(pmap)
	}
	if len(c.Services) > 0 {
		labels[LabelServices] = string(layout.JSON(c.Services))
	}
	if c.Isolation != config.IsolationContainer {
		labels[LabelIsolation] = c.Isolation
	}
	labels[LabelLimits] = limitsOf(c).label()
	return box.Spec{
		Name:         n.Container,
		Hostname:     n.Slug,
		Image:        c.Image,
		Labels:       labels,
		User:         c.User,
		ReadOnly:     c.ReadOnly,
		Tmpfs:        map[string]string{"/tmp": "rw,exec,nosuid,nodev,mode=1777"},
		Volumes:      ownVolumes(n, c.SetupKeep),
		VolumeLabels: m.Repo.Labels(n.Slug, "true"),
		AnonVolumes:  []string{protocol.Dir},
		Shared:       shared,
		Workdir:      hostrepo.Workdir,
		Env:          env,
		CapDrop:      []string{"ALL"},
		SecurityOpt:  []string{"no-new-privileges"},
		PidsLimit:    c.PidsLimit,
		Memory:       c.Memory,
		CPUs:         c.CPUs,
		Network:      c.Network,
		Allow:        allow,
		Publish:      ports.Bindings(pmap),
		Entrypoint:   h.Argv(protocol.CmdInit{})[0],
		Cmd:          h.Argv(protocol.CmdInit{Idle: c.Idle, Volumes: targets(ownVolumes(n, c.SetupKeep)[1:])})[1:],
		Isolation:    preflight.IsolationOf(c),
	}
}

// LabelIsolation labels a sandbox that runs under gVisor.
const LabelIsolation = "dev.litterbox.isolation"

// CreateOptions are the inputs of Create.
type CreateOptions struct {
	Name    string
	BaseRef string // default HEAD; see resolveBaseRef for what it may name
	// MayBaseOn, when set, says which sandboxes' branches BaseRef may name
	// or reach through: an MCP server passes its scope. Nil: any (the CLI).
	MayBaseOn func(slug string) bool
	// Network, when set, replaces the config's: the user's word on the
	// command line, and the only way to get "host".
	Network string
	// Isolation, when set, replaces the config's (the command line's
	// --isolation).
	Isolation string
	// OverLimit lets a person create past [limits] sandboxes.
	OverLimit bool
	// Progress, when set, is told about each step as it finishes (the CLI
	// shows them on a terminal).
	Progress func(step string, took time.Duration)
	// fork, set by Fork, makes the sandbox from another's files.
	fork *forkSource
}

// forkSource is what a fork takes from its source sandbox: its files (a
// copy of its volume), its image, its branch tip and its base.
type forkSource struct {
	slug, volume, image, tip, base string
	// volumes are the source's besides /src (its home, its kept paths).
	volumes []box.Mount
	// snap is where the source's snapshots start from: its submodules
	// and the ignored directories it does not scan.
	snap snapshot.State
	// layer is the source's /src over a base tree, whose key is treeKey,
	// when the fork can lie over the same tree (nil: it copies all).
	layer   *layout.Layer
	treeKey string
}

// Created describes a new sandbox.
type Created struct {
	// Refill: this repository keeps a warm pool for this config, from
	// which the create may have taken an entry. The caller starts the
	// pool's refill apart from itself (the CLI starts `litterbox pool
	// fill` detached), so that no create waits on it.
	Refill bool `json:"-"`

	Name      string             `json:"name"`
	Branch    string             `json:"branch"`
	Container string             `json:"container"`
	Base      string             `json:"base"`
	Status    string             `json:"status"`
	Setup     layout.SetupResult `json:"setup"`
	Ports     []ports.Port       `json:"ports"`
	// Services are the configured services as they were after start.
	Services []services.State `json:"services"`
	Network  string           `json:"network"`
	// Isolation is "container" or "gvisor".
	Isolation string `json:"isolation"`
	// Limits are the sandbox's bounds and where it stands in its
	// repository's and the engine's.
	Limits Limits `json:"limits"`
	// Image is the image the sandbox runs; Build says how it was made
	// when the project builds it.
	Image string            `json:"image"`
	Build *image.BuiltImage `json:"build,omitempty"`
	// ImageFrom is the config file that chose the image, "" for the
	// default.
	ImageFrom string `json:"image_from,omitempty"`
	// ImageHint, on the default image, names the image the project's
	// files ask for and the line of config that sets it.
	ImageHint string `json:"image_hint,omitempty"`
	// SetupCache says whether the setup came from the cache or was kept
	// in it; nil when the cache was not used.
	SetupCache *CacheReport `json:"setup_cache,omitempty"`
	// ForkedFrom is the sandbox a fork copied.
	ForkedFrom string `json:"forked_from,omitempty"`
	// Pool is the warm pool entry the sandbox was claimed from.
	Pool string `json:"pool,omitempty"`
	// Allow is the allowlist of network "allow".
	Allow []string `json:"allow,omitempty"`
	// SetupNetwork, for people, is the network the setup command alone
	// had: the whole network, or its own allowlist.
	SetupNetwork string `json:"setup_network,omitempty"`
	// SetupFrom is the config file that set the setup command, "" for
	// the default.
	SetupFrom string `json:"setup_from,omitempty"`
	Workdir   string `json:"workdir"`
	// ConfigFiles are the config files the sandbox was made from.
	ConfigFiles []string `json:"config_files"`
	// Weakened are the settings that loosen the sandbox's defaults, each
	// with the file (or flag) that set it.
	Weakened []string `json:"weakened"`
	// Submodules says what became of each submodule of the base commit.
	Submodules []Submodule `json:"submodules"`
	// Storage says where /src lives when it is not a volume of its own:
	// on Kubernetes, a claim of the default storage class or an emptyDir
	// that goes with the pod; on an engine, a layer over a base tree.
	Storage string `json:"storage,omitempty"`
	// Notes name what the config files ask for that Litterbox does not
	// do (devcontainer.json features, hooks, mounts).
	Notes []string `json:"notes"`
	// Warnings are things the caller must be told, such as uncommitted host
	// changes that are not in the sandbox.
	Warnings []string `json:"warnings"`
}

// nameInUse explains a container name that is taken: by a leftover of this
// repository (which delete removes) or by someone else's container.
func (m *Creator) nameInUse(ctx context.Context, n hostrepo.Names) error {
	in, err := m.Repo.BoxOf(n).Inspect(ctx)
	if err == nil && !m.Repo.Owns(ctx, n.Container, in.Labels) {
		return hostrepo.Foreign("container", n.Container, in.Labels)
	}
	return &ExistsError{Name: n.Slug, Detail: "container " + n.Container + " exists without its branch; delete it with: litterbox delete " + n.Slug}
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// runContainer makes the sandbox's container, delivers the helper into it
// and starts it, with host ports for its [[ports]]. Two creates may pick the
// same free port at once; the engine refuses the second, which then tries
// other ports. prefill, when set, fills /src (from a fork's source or the
// setup cache): while the container starts when it has no ports, after
// it when a retry could remove the container under the copy.
// It returns the ports and the container's id.
func (m *Creator) runContainer(ctx context.Context, n hostrepo.Names, base string, cfg config.Config, prefill func(context.Context) error) ([]ports.Port, string, error) {
	if len(cfg.Ports) == 0 {
		id, err := m.startContainer(ctx, n, m.ContainerSpec(n, base, cfg, nil, m.Agent.Helper), prefill)
		return nil, id, err
	}
	pmap, id, err := m.runContainerPorts(ctx, n, base, cfg)
	if err == nil && prefill != nil {
		err = prefill(ctx)
	}
	return pmap, id, err
}

func (m *Creator) runContainerPorts(ctx context.Context, n hostrepo.Names, base string, cfg config.Config) ([]ports.Port, string, error) {
	taken, err := m.TakenPorts(ctx)
	if err != nil {
		return nil, "", &hostrepo.StepError{Step: "listing the ports other sandboxes hold", Err: err}
	}
	// This machine's ports say nothing about a remote engine's: there only
	// the engine's refusal tells a taken port.
	free, remote := m.PortFree, ""
	if ep, err := m.Repo.Provider.Endpoint(ctx); err == nil {
		remote = box.RemoteHost(ep)
	}
	if remote != "" {
		free = func(int) bool { return true }
	}
	for attempt := 1; ; attempt++ {
		pmap, err := ports.Allocate(cfg.Ports, taken, m.PortStart, free)
		if err != nil {
			return nil, "", err
		}
		for i := range pmap {
			pmap[i].EngineHost = remote
		}
		id, err := m.startContainer(ctx, n, m.ContainerSpec(n, base, cfg, pmap, m.Agent.Helper), nil)
		if err == nil {
			return pmap, id, nil
		}
		if !errors.Is(err, box.ErrPortInUse) || attempt == 5 {
			return nil, "", err
		}
		// The engine made the container before it failed to bind.
		if rmErr := m.Repo.BoxOf(n).Remove(ctx); rmErr != nil {
			return nil, "", err
		}
		for _, p := range pmap {
			taken[p.HostPort] = true
		}
	}
}

// notMade is a failure to make the container: nothing of it exists
// (boxNotMade says when that spares the engine the create's undo).
type notMade struct{ error }

func (e notMade) Unwrap() error { return e.error }

// startContainer creates the container, copies the helper into its helper
// volume (its PID 1 runs from there) and starts it, running prefill (when
// set) at the same time: nothing reads /src before the setup step. It
// returns the container's id, "" on a runtime without (box.Caps.IDs).
func (m *Creator) startContainer(ctx context.Context, n hostrepo.Names, spec box.Spec, prefill func(context.Context) error) (string, error) {
	step := "starting container " + n.Container
	id, err := m.Repo.Provider.Create(ctx, spec)
	if err != nil {
		return "", notMade{&hostrepo.StepError{Step: step, Err: err}}
	}
	id = m.keptID(id)
	m.Repo.Owned(n.Container) // made just now, with our labels
	if err := m.Agent.Helper.Deliver(ctx, m.Repo.BoxOf(n)); err != nil {
		return "", &hostrepo.StepError{Step: "delivering the sandbox helper", Err: err}
	}
	filled := make(chan error, 1)
	if prefill != nil {
		go func() { filled <- prefill(ctx) }()
	} else {
		filled <- nil
	}
	err = m.Repo.BoxOf(n).Start(ctx)
	if ferr := <-filled; ferr != nil && err == nil {
		return "", ferr
	}
	if err != nil {
		if !errors.Is(err, box.ErrPortInUse) {
			err = fmt.Errorf("the sandbox helper (PID 1) could not start in image %s; %s: %w", spec.Image, preflight.StartFix(err, "litterbox doctor checks the image"), err)
		}
		return "", &hostrepo.StepError{Step: step, Err: err}
	}
	return id, nil
}

// keptID is the id a record keeps of a box the engine made: "" on a
// runtime whose boxes have none (box.Caps.IDs; Kubernetes gives the pod's
// name). Names checks it again when a record is read.
func (m *Creator) keptID(id string) string {
	if !m.Repo.Provider.Caps().IDs {
		return ""
	}
	return id
}

// copyTree streams the checkout of base through Chown into `docker cp -`,
// so the sandbox user owns /src and no archive is held in memory or on
// disk; first it gives the volumes to that user, unless they were already
// (a pool entry's). With yours, the user's work tree gives the attributes
// (base is an agent's commit: gitcli.CheckoutTar).
func (m *Creator) copyTree(ctx context.Context, n hostrepo.Names, base string, yours bool, keep []string, uid, gid int, prepared bool) error {
	if !prepared {
		if err := m.prepareVolumes(ctx, n, ownVolumes(n, keep), uid); err != nil {
			return err
		}
	}
	src := archiveSource{g: m.Repo.Git, gitDir: m.Repo.GitDir, dir: filepath.Join(m.Repo.Layout().TmpOf(n.Slug), "archive"), yours: yours}
	return m.copyArchive(ctx, src, base, m.intoBox(n, hostrepo.Workdir), uid, gid, keepRules(m.Repo.Layout().Ignore(n.Slug)))
}

// prepareVolumes gives the roots of vols to the sandbox user. A new
// volume's root is root:root 0755; its owner (root, needing no capability)
// opens it up. Podman gives the volume to the container's user already, and
// root, without capabilities, may not chmod it: that is fine too.
func (m *Creator) prepareVolumes(ctx context.Context, n hostrepo.Names, vols []box.Mount, uid int) error {
	dirs := targets(vols)
	if _, err := ExecChecked(ctx, m.Repo.BoxOf(n), box.ExecSpec{User: "0:0", Cmd: m.Agent.Helper.Argv(protocol.CmdPrepare{UID: strconv.Itoa(uid), Dirs: dirs})}); err != nil {
		return &hostrepo.StepError{Step: "preparing " + strings.Join(dirs, ", "), Err: err}
	}
	return nil
}

// firstError keeps the first error reported to it.
type firstError struct {
	mu   sync.Mutex
	err  error
	step string
}

func (f *firstError) set(err error, step string) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err, f.step = err, step
	}
}

// ExecChecked runs a command in b that must succeed.
func ExecChecked(ctx context.Context, b box.Box, spec box.ExecSpec) (runner.Result, error) {
	return execChecked(ctx, b, spec, box.Streams{})
}

// execChecked is ExecChecked with the command's streams.
func execChecked(ctx context.Context, b box.Box, spec box.ExecSpec, s box.Streams) (runner.Result, error) {
	res, err := b.Exec(ctx, spec, s)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("`%s` exited with code %d: %s", runner.Join(spec.Cmd), res.ExitCode, agenttext.FirstLine(string(res.Stderr)))
	}
	return res, err
}

// keepRules returns a visitor that copies .gitignore and .gitattributes
// files under root (a sandbox's rules mirror) as the tree streams into the
// container.
func keepRules(root string) func(string, []byte) error {
	return func(name string, data []byte) error {
		if !snapshot.ValidPath(name) {
			return nil
		}
		dst := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	}
}

// runSetup runs the setup command through the helper, which first takes the
// baseline manifest, so whatever the command changes is snapshotted too.
func (m *Creator) runSetup(ctx context.Context, n hostrepo.Names, cmd string, env map[string]string, start snapshot.State) (layout.SetupResult, error) {
	unlock, err := m.Repo.Lock(ctx, n.Slug)
	if err != nil {
		return layout.SetupResult{}, err
	}
	defer unlock()
	if err := m.Repo.SaveSnap(n.Slug, start); err != nil {
		return layout.SetupResult{}, err
	}
	res, err := m.Agent.ActLocked(ctx, n.Slug, agent.Action{Op: protocol.OpSetup, Arg: hostrepo.Workdir, Cmd: cmd, Env: env, Kind: "setup", Detail: cmd})
	if err != nil {
		return layout.SetupResult{}, err
	}
	// The command is the user's, and may spell a secret out.
	out := layout.SetupResult{Command: m.Repo.Secrets.Seen().Redact(cmd), ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, Snapshot: res.Snapshot}
	if res.NoShell {
		out.Skipped = true
		out.Stderr = "the image has no /bin/sh: the setup command did not run"
	}
	return out, nil
}

// CacheReport is what a create did with the setup cache.
type CacheReport struct {
	Key   string `json:"key"`
	Hit   bool   `json:"hit"`   // the setup's result came from the cache
	Saved bool   `json:"saved"` // this create's setup result was kept
	From  string `json:"from,omitempty"`
	Files int    `json:"files"`
	Bytes int64  `json:"bytes"`
	// NotKept says why this create's setup result was not kept.
	NotKept string `json:"not_kept,omitempty"`
}

// imageHint, for a sandbox on the default image, names the image the
// project's files ask for and the line of config that sets it; "" when
// the config chose the image, or the files name none.
func (m *Creator) imageHint(cfg config.Config) string {
	if !cfg.ImageIsDefault() {
		return ""
	}
	if s, ok := projectimage.Suggest(m.Repo.Root); ok {
		return s.String()
	}
	return ""
}

func forkedFrom(f *forkSource) string {
	if f == nil {
		return ""
	}
	return f.slug
}
