// Package doctor checks that this machine can run sandboxes of a
// repository: the runtime and its engine, the helper, the image (built,
// pulled or present) and a probe sandbox of it, git, the repository, its
// agents' containment, its config and its ports. It never stops at the
// first failure; create's own preflight is the sandbox package's.
package doctor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/mcpclients"
	"github.com/litterbox-dev/litterbox/internal/ports"
	"github.com/litterbox-dev/litterbox/internal/preflight"
	"github.com/litterbox-dev/litterbox/internal/projectimage"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/runner"
)

// Failed reports whether any check failed.
func Failed(checks []box.Check) bool {
	for _, c := range checks {
		if c.Status == box.CheckFail {
			return true
		}
	}
	return false
}

// Run runs every preflight check for the repository at dir on runtime rt
// and returns them all; it never stops at the first failure.
func Run(ctx context.Context, r runner.Runner, rt engine.Runtime, loc hostrepo.Location) []box.Check {
	cli := rt.Provider(r)
	checks, engineUp := runtimeChecks(ctx, cli, rt)
	m, err := sandbox.OpenRepo(ctx, r, rt, loc)
	var cfg config.Config
	if err == nil {
		cfg, err = m.Repo.CreateConfig()
	}
	h, herr := helperbin.Local()
	if herr != nil {
		checks = append(checks, box.Check{Name: "helper", Status: box.CheckFail, Detail: preflight.OneLineErr(herr)})
	} else {
		c := box.Check{Name: "helper", Status: box.CheckOK, Detail: h.Describe()}
		if h.Passed != "" {
			c.Status, c.Fix = box.CheckWarn, "reinstall both from one build: make install, or go install github.com/litterbox-dev/litterbox/cmd/...@VERSION"
		}
		checks = append(checks, c)
	}
	if engineUp {
		checks = append(checks, imageChecks(ctx, m, cli, rt, cfg, err, h, herr)...)
	} else {
		checks = append(checks, box.Check{Name: "image", Status: box.CheckFail, Detail: "not checked: the engine is not reachable"})
	}
	g := gitcli.New(loc.Dir, r)
	if v, gerr := g.Output(ctx, "version"); gerr != nil {
		checks = append(checks, box.Check{Name: "git", Status: box.CheckFail, Detail: preflight.OneLineErr(gerr), Fix: "install git"})
	} else {
		checks = append(checks, box.Check{Name: "git", Status: box.CheckOK, Detail: strings.TrimSpace(v)})
	}
	if m == nil {
		c := box.Check{Name: "repository", Status: box.CheckFail, Detail: preflight.OneLineErr(err), Fix: "run litterbox inside a git repository, or pass --repo DIR"}
		var re *hostrepo.RepoError
		if errors.As(err, &re) {
			c.Detail, c.Fix = preflight.OneLineErr(re.Err), re.Fix
		}
		return append(checks, c)
	}
	return append(checks, repoChecks(ctx, m, cfg, err, engineUp)...)
}

// runtimeChecks find the runtime's CLI and its engine, and run the
// provider's own checks once the engine answers.
func runtimeChecks(ctx context.Context, cli box.Provider, rt engine.Runtime) (checks []box.Check, engineUp bool) {
	client, server, err := cli.Versions(ctx)
	if errors.Is(err, box.ErrBinaryMissing) {
		return []box.Check{
			{Name: "runtime", Status: box.CheckFail, Detail: rt.Bin + " not found on PATH",
				Fix: "install " + rt.Bin + ", or choose another runtime with --runtime or LITTERBOX_RUNTIME"},
			{Name: "engine", Status: box.CheckFail, Detail: "not checked: no " + rt.Bin + " CLI"},
		}, false
	}
	checks = append(checks, box.Check{Name: "runtime", Status: box.CheckOK, Detail: rt.Bin + " " + orUnknown(client)})
	c := preflight.EngineCheck(ctx, cli, server, err)
	engineUp = c.Status == box.CheckOK
	checks = append(checks, c)
	if ch, ok := cli.(box.Checker); ok && engineUp {
		checks = append(checks, ch.Checks(ctx)...)
	}
	return checks, engineUp
}

// imageChecks find (or build, or pull) the image a create would use and
// start a probe sandbox of it. The probe runs as create would, but never
// with what the config check refuses: then only the image is the config's.
// m is nil, and cfgErr set, when the repository or its config could not be
// read: the default image is probed.
func imageChecks(ctx context.Context, m *sandbox.Manager, cli box.Provider, rt engine.Runtime, cfg config.Config, cfgErr error, h *helperbin.Binary, herr error) []box.Check {
	probeCfg := config.Default()
	if cfgErr == nil {
		probeCfg = cfg
		if _, werr := m.Repo.CheckWeakenings(ctx, cfg); werr != nil {
			probeCfg = config.Default()
			probeCfg.Image = cfg.Image
		}
	}
	var c box.Check
	var platform string
	if probeCfg.Build != nil {
		c, platform = buildCheck(ctx, m, probeCfg)
		if c.Status == box.CheckOK {
			probeCfg.Image = strings.Fields(c.Detail)[0]
		}
	} else {
		c, platform = imageCheck(ctx, cli, rt.Bin, probeCfg.Image, cfg.From["docker.image"])
	}
	checks := []box.Check{c}
	// An image still to be built cannot be probed.
	if c.Status != box.CheckFail && herr == nil && (probeCfg.Build == nil || c.Status == box.CheckOK) {
		pm := sandbox.New(&hostrepo.Repo{Provider: cli, Runtime: rt})
		pm.Agent.Helper = h
		sc, p := sandboxCheck(ctx, pm, probeCfg, platform)
		checks = append(checks, sc)
		if sc.Status != box.CheckFail {
			if len(probeCfg.AgentCommand) > 0 {
				checks = append(checks, agentCheck(probeCfg, p))
			}
			checks = append(checks, isolationCheck(ctx, pm, probeCfg))
		}
	}
	return checks
}

// repoChecks are the repository's: its commits, its agents' containment,
// its config and its ports.
func repoChecks(ctx context.Context, m *sandbox.Manager, cfg config.Config, cfgErr error, engineUp bool) []box.Check {
	checks := []box.Check{repoCheck(ctx, m)}
	for _, f := range mcpclients.Containment(m.Repo.Root) {
		checks = append(checks, containmentCheck(f))
	}
	for _, p := range mcpclients.Portable(m.Repo.Root) {
		checks = append(checks, entryCheck(p))
	}
	if cfgErr != nil {
		return append(checks, box.Check{Name: "config", Status: box.CheckFail, Detail: preflight.OneLineErr(cfgErr), Fix: "fix the file named above"})
	}
	checks = append(checks, configCheck(ctx, m, cfg))
	if len(cfg.Ports) > 0 && engineUp {
		checks = append(checks, portsCheck(ctx, m, cfg))
	}
	return checks
}

// containmentCheck says whether a client set up in the repository could
// still change the host checkout without Litterbox: a warning, since the
// sandboxes themselves are fine either way.
func containmentCheck(f mcpclients.Finding) box.Check {
	c := box.Check{Name: "containment " + f.Client, Status: box.CheckOK, Detail: f.Detail}
	if !f.Contained {
		c.Status, c.Fix = box.CheckWarn, f.Fix
	}
	return c
}

// entryCheck says whether a client's litterbox entry works in every
// clone: an entry that serves another repository fails, one that holds
// this machine's paths is a warning (it works here, and only here).
func entryCheck(p mcpclients.Portability) box.Check {
	c := box.Check{Name: "entry " + p.Client, Status: box.CheckOK, Detail: p.File + " " + p.Detail}
	switch {
	case p.Other:
		c.Status, c.Fix = box.CheckFail, p.Fix
	case !p.Portable:
		c.Status, c.Fix = box.CheckWarn, p.Fix
	}
	return c
}

// buildCheck is the image check of a project image: its tag as HEAD's
// build inputs name it, present, or to be built by the next create.
func buildCheck(ctx context.Context, m *sandbox.Manager, cfg config.Config) (box.Check, string) {
	b := cfg.Build
	tag, err := m.Repo.Git.ResolveCommit(ctx, "HEAD")
	if err == nil {
		tag, err = m.Images().ProjectTag(ctx, cfg, tag)
	}
	if err != nil {
		return box.Check{Name: "image", Status: box.CheckFail, Detail: preflight.OneLineErr(err), Fix: "fix [docker] build, context and the Dockerfile it names"}, ""
	}
	info, err := box.Images(m.Repo.Provider).Image(ctx, tag)
	if err != nil {
		return box.Check{Name: "image", Status: box.CheckWarn, Detail: tag + " is not built yet: the next create builds it from " + b.Dockerfile}, ""
	}
	return box.Check{Name: "image", Status: box.CheckOK, Detail: tag + " (" + info.Platform + "), built from " + b.Dockerfile}, info.Platform
}

// sandboxCheck starts a throwaway container of the image the way a sandbox
// is started (same user, read-only root, /tmp, limits, the helper as PID 1)
// and asks the helper what it finds: that it runs at all (architecture),
// that /tmp and /src are writable and /tmp executable, and whether there is
// a shell.
// agentCheck says whether the project's agent ([agent] command) is in the
// image, as the probe found it.
func agentCheck(cfg config.Config, p protocol.Probe) box.Check {
	program := cfg.AgentCommand[0]
	if p.Program == "" {
		return box.Check{Name: "agent", Status: box.CheckFail,
			Detail: fmt.Sprintf("%s ([agent] command) is not in %s (not found in its PATH, %s): litterbox run would fail", program, cfg.Image, p.Path),
			Fix:    "install it in the image (see docs/run.md), or change [agent] command"}
	}
	detail := fmt.Sprintf("%s ([agent] command) is %s in %s", program, p.Program, cfg.Image)
	if cfg.Allow == nil {
		return box.Check{Name: "agent", Status: box.CheckWarn, Detail: detail + ", in a sandbox that reaches no host: an agent that calls its API cannot",
			Fix: `set [network] mode = "allow" with the API's host, and its key with inject (see docs/run.md)`}
	}
	var keys []string
	for _, name := range slices.Sorted(maps.Keys(cfg.Injected())) {
		keys = append(keys, name+" for "+strings.Join(cfg.Secrets[name].Inject, ", "))
	}
	if len(keys) > 0 {
		detail += "; injected: " + strings.Join(keys, "; ")
	}
	return box.Check{Name: "agent", Status: box.CheckOK, Detail: detail}
}

func sandboxCheck(ctx context.Context, m *sandbox.Manager, cfg config.Config, platform string) (box.Check, protocol.Probe) {
	h := m.Agent.Helper
	fail := func(detail, fix string) (box.Check, protocol.Probe) {
		return box.Check{Name: "sandbox", Status: box.CheckFail, Detail: cfg.Image + ": " + detail, Fix: fix}, protocol.Probe{}
	}
	if platform == "" { // just pulled
		info, err := box.Images(m.Repo.Provider).Image(ctx, cfg.Image)
		if err != nil {
			return fail(preflight.OneLineErr(err), "")
		}
		platform = info.Platform
	}
	if err := h.CheckPlatform(cfg.Image, platform); err != nil {
		return fail(err.Error(), "")
	}
	p, detail, fix := runProbe(ctx, m, cfg)
	warn := func(detail, fix string) (box.Check, protocol.Probe) {
		return box.Check{Name: "sandbox", Status: box.CheckWarn, Detail: detail, Fix: fix}, p
	}
	switch {
	case detail != "":
		return fail(detail, fix)
	case !p.TmpWrite:
		return fail("/tmp is not writable by the sandbox user", "the engine must honour --tmpfs /tmp (podman and docker do)")
	case !p.TmpExec:
		return fail("/tmp is not executable: "+p.TmpDetail, "the engine must honour --tmpfs /tmp:exec")
	case !p.SrcWrite:
		return fail(hostrepo.Workdir+" is not writable by the sandbox user", "set [docker] user in "+config.File+" to a numeric uid:gid the image allows")
	case !p.Shell:
		return warn(fmt.Sprintf("%s runs sandboxes (linux/%s) but has no /bin/sh: bash, exec, shell, services and the setup command are unavailable; read, write, edit, patch, ls, glob and grep work", cfg.Image, p.Arch),
			"use an image with a shell if agents need to run commands")
	}
	return box.Check{Name: "sandbox", Status: box.CheckOK, Detail: fmt.Sprintf("%s runs sandboxes: helper on linux/%s as uid %d, /tmp and %s writable, /bin/sh present", cfg.Image, p.Arch, p.User, hostrepo.Workdir)}, p
}

// runProbe starts a throwaway sandbox container of cfg the way a sandbox
// is started and asks its helper what it finds; detail (and fix) say why
// it could not.
func runProbe(ctx context.Context, m *sandbox.Manager, cfg config.Config) (p protocol.Probe, detail, fix string) {
	h := m.Agent.Helper
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	n := hostrepo.Names{Slug: "doctor", Container: "litterbox-doctor-" + hex.EncodeToString(rnd[:])}
	spec := m.Creator.ContainerSpec(n, "", cfg, nil, h)
	spec.Labels = map[string]string{"dev.litterbox.probe": "true"}
	var own []string // /src and the home, as anonymous volumes here
	for _, v := range spec.Volumes {
		own = append(own, v.Target)
	}
	spec.AnonVolumes = append(spec.AnonVolumes, own...)
	spec.Volumes, spec.VolumeLabels = nil, nil
	probe := box.Of(m.Repo.Provider, n.Container)
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = probe.Remove(rctx)
	}()
	if _, err := m.Repo.Provider.Create(ctx, spec); err != nil {
		return p, "a sandbox container cannot be made: " + preflight.OneLineErr(err), ""
	}
	if err := h.Deliver(ctx, probe); err != nil {
		return p, preflight.OneLineErr(err), ""
	}
	if err := probe.Start(ctx); err != nil {
		return p, "the sandbox helper does not start: " + preflight.OneLineErr(err), preflight.StartFix(err, "use an image for linux/"+h.Arch+", or a helper for the image's architecture ("+helperbin.Env+")")
	}
	uid, _, _ := cfg.IDs()
	if _, err := create.ExecChecked(ctx, probe, box.ExecSpec{User: "0:0", Cmd: h.Argv(protocol.CmdPrepare{UID: strconv.Itoa(uid), Dirs: own})}); err != nil {
		return p, "/src and the home cannot be given to the sandbox user: " + preflight.OneLineErr(err), ""
	}
	var out bytes.Buffer
	var program string
	if len(cfg.AgentCommand) > 0 {
		program = cfg.AgentCommand[0]
	}
	res, err := probe.Exec(ctx, box.ExecSpec{Cmd: h.Argv(protocol.CmdProbe{Program: program})}, box.Streams{Stdout: &out})
	if err == nil && res.ExitCode == 0 {
		err = json.Unmarshal(out.Bytes(), &p)
	} else if err == nil {
		err = fmt.Errorf("exit code %d: %s", res.ExitCode, agenttext.FirstLine(string(res.Stderr)))
	}
	if err != nil {
		return p, "the sandbox helper does not answer: " + preflight.OneLineErr(err), ""
	}
	return p, "", ""
}

// isolationCheck says which isolation levels this engine offers: the
// engine's own runtime always (the sandbox check proved it), gVisor when
// its runtime is known to the engine and a probe sandbox runs under it,
// on gVisor's kernel.
func isolationCheck(ctx context.Context, m *sandbox.Manager, cfg config.Config) box.Check {
	cfg.Isolation, cfg.Network, cfg.Allow, cfg.SetupOpen, cfg.SetupAllow, cfg.Ports = config.IsolationGVisor, "none", nil, false, nil, nil
	c := box.Check{Name: "isolation", Status: box.CheckOK}
	if cfg.Build != nil || cfg.Image == "" {
		cfg.Image = config.Default().Image
	}
	fix := "install gVisor (apt-get install runsc) and register it with the engine (docs/security.md#isolation-levels)"
	if ch, ok := m.Repo.Provider.(box.IsolationChecker); ok {
		if err := ch.CheckIsolation(ctx, preflight.IsolationOf(cfg)); err != nil {
			c.Status, c.Detail, c.Fix = box.CheckWarn, "container; not gvisor: "+preflight.OneLineErr(err), fix
			return c
		}
	}
	p, detail, _ := runProbe(ctx, m, cfg)
	if strings.Contains(detail, "root network namespace") {
		// Rootful Podman on a host like these (NOTES-docker.md).
		fix = preflight.GVisorFlagsFix
	}
	switch {
	case detail != "":
		c.Status, c.Detail, c.Fix = box.CheckWarn, "container; not gvisor: "+detail, fix
	case p.Kernel != "4.4.0":
		c.Status, c.Detail, c.Fix = box.CheckWarn, fmt.Sprintf("container; not gvisor: runtime %q ran the probe on kernel %s, not gVisor's", cfg.GVisorRuntime, p.Kernel), "name gVisor's runtime in [docker] gvisor-runtime"
	default:
		c.Detail = fmt.Sprintf("container, gvisor (%s: a probe ran on its kernel %s)", gvisorName(m, cfg), p.Kernel)
	}
	return c
}

// gvisorName is what gives this engine gVisor: a runtime of the engine,
// or the cluster's RuntimeClass.
func gvisorName(m *sandbox.Manager, cfg config.Config) string {
	if m.Repo.Runtime.Kubernetes {
		return "RuntimeClass " + cfg.RuntimeClass
	}
	return "runtime " + cfg.GVisorRuntime
}

// imageCheck finds the image or pulls it: an image that cannot be had fails
// every create. It returns the image's platform when it found it present.
func imageCheck(ctx context.Context, cli box.Provider, bin, image, from string) (box.Check, string) {
	info, err := box.Images(cli).Image(ctx, image)
	platform := info.Platform
	switch {
	case errors.Is(err, box.ErrImageNotFound):
		return preflight.PullCheck(ctx, cli, bin, image, from), ""
	case err != nil:
		return box.Check{Name: "image", Status: box.CheckFail, Detail: image + ": " + preflight.OneLineErr(err)}, ""
	}
	return box.Check{Name: "image", Status: box.CheckOK, Detail: image + " present"}, platform
}

func repoCheck(ctx context.Context, m *sandbox.Manager) box.Check {
	head, err := m.Repo.Git.ResolveCommit(ctx, "HEAD")
	if err != nil {
		return box.Check{Name: "repository", Status: box.CheckFail, Detail: m.Repo.Root + " has no commits", Fix: "commit something: only commits reach a sandbox"}
	}
	c := box.Check{Name: "repository", Status: box.CheckOK, Detail: fmt.Sprintf("%s at %s", m.Repo.Root, hostrepo.ShortID(head))}
	if dirty, err := m.Repo.Uncommitted(ctx); err == nil && dirty > 0 {
		c.Status = box.CheckWarn
		c.Detail += fmt.Sprintf("; %d uncommitted change(s) in the work tree will NOT be in new sandboxes", dirty)
		c.Fix = "commit what the agent should see"
	}
	return c
}

func configCheck(ctx context.Context, m *sandbox.Manager, cfg config.Config) box.Check {
	c := box.Check{Name: "config", Status: box.CheckOK, Detail: "no " + config.File + "; defaults (image " + cfg.Image + ")"}
	if len(cfg.Files) > 0 {
		if _, err := m.Repo.CheckWeakenings(ctx, cfg); err != nil {
			var we *hostrepo.WeakeningError
			fix := "fix the file named above"
			if errors.As(err, &we) && we.Weakening.File == config.File {
				fix = "read " + config.File + ", then: litterbox trust"
			}
			return box.Check{Name: "config", Status: box.CheckFail, Detail: preflight.OneLineErr(err), Fix: fix}
		}
		c.Detail = fmt.Sprintf("%s: image %s, network %s, %d port(s), %d service(s)",
			strings.Join(cfg.Files, " + "), cfg.Image, cfg.Network, len(cfg.Ports), len(cfg.Services))
	}
	// On the default image, the project's files may say which one it
	// needs: busybox has none of their tools.
	if s, ok := projectimage.Suggest(m.Repo.Root); ok && cfg.ImageIsDefault() {
		c.Status = box.CheckWarn
		c.Detail = fmt.Sprintf("sandboxes run the default image, %s, and this is a %s project (%s): busybox has no %s", cfg.Image, s.Kind, s.File, s.Tool)
		c.Fix = fmt.Sprintf("set %s under [docker] in %s", s.Config(), config.File)
	}
	return c
}

// portsCheck makes sure a create would find a host port for every entry.
func portsCheck(ctx context.Context, m *sandbox.Manager, cfg config.Config) box.Check {
	taken, err := m.Creator.TakenPorts(ctx)
	if err != nil {
		return box.Check{Name: "ports", Status: box.CheckFail, Detail: preflight.OneLineErr(err)}
	}
	pmap, err := m.Creator.AllocatePorts(cfg.Ports, taken)
	if err != nil {
		return box.Check{Name: "ports", Status: box.CheckFail, Detail: err.Error(),
			Fix: fmt.Sprintf("free a port in %d-%d, or delete sandboxes you no longer need", ports.RangeLow, ports.RangeHigh)}
	}
	var parts []string
	for _, p := range pmap {
		parts = append(parts, fmt.Sprintf("%s (e.g. %d)", p.Name, p.HostPort))
	}
	return box.Check{Name: "ports", Status: box.CheckOK, Detail: "free host ports for " + strings.Join(parts, ", ")}
}

func orUnknown(s string) string {
	if s == "" {
		return "(version unknown)"
	}
	return s
}
