// Package egressproxy is the host's side of a sandbox's egress proxy: the
// container beside the sandbox that lets it reach only its allowlist, made,
// paused and resumed with it, removed with it, and read for what it refused.
package egressproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/egress"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// A sandbox with network mode "allow" has no network of its own. Its PID 1
// relays 127.0.0.1:3128 to a socket in a volume held in memory, which it
// shares, read-only, with the sandbox's egress proxy: Litterbox's own binary
// in a container of its own on the egress network, which connects only to
// the allowlist's hosts. A direct connection or a DNS lookup from the
// sandbox fails at once: there is no route.

// Proxies are the egress proxies of one repository's sandboxes; the helper
// is the proxy's program.
type Proxies struct{ Agent *agent.Agent }

// proxy is the handle of the egress proxy of the sandbox named in n.
func (p *Proxies) proxy(n hostrepo.Names) box.Box { return box.Of(p.Agent.Repo.Provider, n.Egress()) }

// Role is the dev.litterbox.managed label of a sandbox's egress proxy
// and its volume: a container that serves a sandbox rather than being one,
// so `docker ps` of managed sandboxes (managed=true) leaves it out.
const Role = "egress"

// Env is what makes go, npm, pip, curl, wget and git use the proxy.
func Env() map[string]string {
	url := "http://127.0.0.1:" + protocol.EgressPort
	env := map[string]string{"LITTERBOX_EGRESS": protocol.EgressSocket}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		env[k] = url
	}
	env["NO_PROXY"], env["no_proxy"] = "localhost,127.0.0.1,::1", "localhost,127.0.0.1,::1"
	return env
}

// Used: the sandbox is made with the egress proxy's volume and
// environment, for an allowlist of its own or of its setup command.
func Used(cfg config.Config) bool { return cfg.Allow != nil || cfg.SetupAllow != nil }

// Proxied says whether this sandbox's allowlist goes through the egress
// proxy: on Kubernetes it is the pod's NetworkPolicy instead.
func (p *Proxies) Proxied(cfg config.Config) bool {
	return Used(cfg) && p.Agent.Repo.Provider.Caps().EgressProxy
}

// PolicyNetwork refuses, on a runtime that enforces the allowlist itself
// (a pod's NetworkPolicy) rather than through the egress proxy, a setup
// command with a network of its own (the policy is the box's for its
// life), and a secret the proxy would inject.
func PolicyNetwork(cfg config.Config) error {
	if cfg.SetupAllow != nil || cfg.SetupOpensNetwork() {
		return fmt.Errorf("the setup command's own network ([network] setup): %w", box.ErrUnsupported)
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Injected())) {
		return fmt.Errorf("secret %s's inject (the egress proxy gives it its hosts; here a NetworkPolicy stands for the proxy): %w", name, box.ErrUnsupported)
	}
	return nil
}

// NewInjection makes a sandbox's side of its injected secrets: a
// placeholder for each, unique to the sandbox, and a CA that may sign for
// their hosts only; nil when cfg injects none.
func NewInjection(slug string, cfg config.Config) (*layout.Injection, error) {
	injected := cfg.Injected()
	if len(injected) == 0 {
		return nil, nil
	}
	inj := &layout.Injection{Placeholders: map[string]string{}}
	var hosts []string
	for name, s := range injected {
		var rnd [16]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return nil, err
		}
		inj.Placeholders[name] = "litterbox-placeholder-" + name + "-" + hex.EncodeToString(rnd[:])
		hosts = append(hosts, s.Inject...)
	}
	slices.Sort(hosts)
	ca, err := egress.NewCA(slug, slices.Compact(hosts))
	if err != nil {
		return nil, fmt.Errorf("making the sandbox's CA: %w", err)
	}
	key, err := ca.KeyPEM()
	if err != nil {
		return nil, err
	}
	inj.CACert, inj.CAKey = string(ca.CertPEM()), string(key)
	return inj, nil
}

// TestRootsEnv names a PEM file of roots the egress proxy trusts besides
// the system's, for the tests' stand-in API servers only.
const TestRootsEnv = "LITTERBOX_TEST_EGRESS_ROOTS"

// Inject gives the running egress proxy of sandbox n the secrets it
// injects: their values, read now on this host, with rec's placeholders
// and CA, on the stdin of an exec in the proxy's container (see
// protocol.CmdInject). Nothing for a sandbox without injection.
func (p *Proxies) Inject(ctx context.Context, n hostrepo.Names, rec *layout.Record) error {
	if rec == nil || rec.Injection == nil {
		return nil
	}
	specs := map[string]config.SecretSpec{}
	for name := range rec.Injection.Placeholders {
		specs[name] = rec.Secrets[name]
	}
	vals, err := p.Agent.Repo.Secrets.Resolve(ctx, specs)
	if err != nil {
		return &hostrepo.StepError{Step: "reading the secrets the egress proxy injects", Err: err}
	}
	msg := egress.Secrets{CACert: rec.Injection.CACert, CAKey: rec.Injection.CAKey}
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		msg.Injections = append(msg.Injections, egress.Injection{Name: name, Placeholder: rec.Injection.Placeholders[name], Value: vals.Env()[name], Hosts: specs[name].Inject, Header: specs[name].Header})
	}
	if f := os.Getenv(TestRootsEnv); f != "" {
		roots, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("%s: %w", TestRootsEnv, err)
		}
		msg.Roots = string(roots)
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	spec := box.ExecSpec{Interactive: true, Cmd: p.Agent.Helper.Argv(protocol.CmdInject{Control: protocol.EgressControl}),
		StdinKey: func([]byte) string { return "the secrets the egress proxy injects" }}
	res, err := p.proxy(n).Exec(ctx, spec, box.Streams{Stdin: bytes.NewReader(data)})
	if err == nil && res.ExitCode != 0 {
		err = errors.New(agenttext.FirstLine(string(res.Stderr)))
	}
	if err != nil {
		return &hostrepo.StepError{Step: "giving the egress proxy " + n.Egress() + " its secrets", Err: err}
	}
	return nil
}

// SetupEnv is the setup command's own environment: with the whole network
// it goes straight out, not through the sandbox's proxy.
func SetupEnv(cfg config.Config) map[string]string {
	if !cfg.SetupOpensNetwork() || !Used(cfg) {
		return nil
	}
	env := Env()
	for k := range env {
		env[k] = ""
	}
	return env
}

// MakeVolume makes the volume, held in memory, of the egress proxy's
// socket.
func (p *Proxies) MakeVolume(ctx context.Context, n hostrepo.Names, uid, gid int) error {
	if err := box.Egress(p.Agent.Repo.Provider).TmpfsVolume(ctx, n.Egress(), p.Agent.Repo.Labels(n.Slug, Role), uid, gid); err != nil {
		return &hostrepo.StepError{Step: "making the egress proxy's volume", Err: err}
	}
	return nil
}

// FirstAllow is the allowlist the proxy starts with: the setup command's
// when it has one of its own.
func FirstAllow(cfg config.Config) []string {
	if cfg.SetupAllow != nil {
		return cfg.SetupAllow
	}
	return cfg.Allow
}

// EndSetupNetwork takes away what the setup command alone had: the egress
// network, or its own allowlist, whose proxy gives way to one with the
// sandbox's (or to none). Nothing of the agent's runs before it.
func (p *Proxies) EndSetupNetwork(ctx context.Context, n hostrepo.Names, cfg config.Config) error {
	if cfg.SetupOpensNetwork() {
		if err := box.Egress(p.Agent.Repo.Provider).DisconnectNetwork(ctx, cfg.OutboundNetwork(), n.Container); err != nil {
			return &hostrepo.StepError{Step: "taking the setup command's network " + cfg.OutboundNetwork() + " away", Err: err}
		}
	}
	if cfg.SetupAllow == nil {
		return nil
	}
	if err := p.proxy(n).Remove(ctx); err != nil {
		return &hostrepo.StepError{Step: "ending the setup command's egress proxy", Err: err}
	}
	if cfg.Allow == nil {
		return nil
	}
	return p.Start(ctx, n, cfg, cfg.Allow)
}

// Start makes and starts the egress proxy of a sandbox, hardened like
// the sandbox, from the sandbox's own image (the helper is static: any
// image will do, and no other image is needed).
func (p *Proxies) Start(ctx context.Context, n hostrepo.Names, cfg config.Config, allow []string) error {
	labels := p.Agent.Repo.Labels(n.Slug, Role)
	network := cfg.OutboundNetwork()
	h := p.Agent.Helper
	proxy := protocol.CmdProxy{Addr: "unix:" + protocol.EgressSocket, Allow: strings.Join(allow, ",")}
	if len(cfg.Injected()) > 0 {
		proxy.Control = protocol.EgressControl
	}
	spec := box.Spec{
		Name:        n.Egress(),
		Hostname:    n.Slug + "-egress",
		Image:       cfg.Image,
		Labels:      labels,
		User:        cfg.User,
		ReadOnly:    true,
		AnonVolumes: []string{protocol.Dir},
		Shared:      []box.Mount{{Volume: n.Egress(), Target: protocol.EgressDir}},
		CapDrop:     []string{"ALL"},
		SecurityOpt: []string{"no-new-privileges"},
		PidsLimit:   64,
		Memory:      "128m",
		CPUs:        "1",
		Network:     network,
		// Each refusal is a log line the agent provokes: bounded.
		LogMax:     "1m",
		Entrypoint: h.Argv(proxy)[0],
		Cmd:        h.Argv(proxy)[1:],
	}
	if _, err := p.Agent.Repo.Provider.Create(ctx, spec); err != nil {
		return &hostrepo.StepError{Step: "making the egress proxy " + n.Egress(), Err: err}
	}
	if err := h.Deliver(ctx, p.proxy(n)); err != nil {
		return &hostrepo.StepError{Step: "delivering the helper to the egress proxy", Err: err}
	}
	if err := p.proxy(n).Start(ctx); err != nil {
		return &hostrepo.StepError{Step: "starting the egress proxy on network " + network, Err: err}
	}
	if proxy.Control == "" {
		return nil
	}
	rec, err := p.Agent.Repo.Store().Load(n.Slug)
	if err != nil {
		return err
	}
	return p.Inject(ctx, n, rec)
}

// Remove removes the egress proxy and its volume, returning what is
// left; neither existing is fine.
func (p *Proxies) Remove(ctx context.Context, n hostrepo.Names) (removed, left []string) {
	return RemoveContainer(ctx, p.Agent.Repo.Provider, n.Egress())
}

// RemoveContainer removes the egress proxy container name and its volume of
// the same name.
func RemoveContainer(ctx context.Context, p box.Provider, name string) (removed, left []string) {
	if err := p.Remove(ctx, name); err == nil {
		removed = append(removed, "egress proxy "+name)
	} else if !errors.Is(err, box.ErrNotFound) {
		return nil, []string{fmt.Sprintf("egress proxy %s (%v)", name, err)}
	}
	if err := p.RemoveVolume(ctx, name); err == nil {
		removed = append(removed, "volume "+name)
	} else if !errors.Is(err, box.ErrNoSuchVolume) {
		left = append(left, fmt.Sprintf("volume %s (%v)", name, err))
	}
	return removed, left
}

// Owns reports whether the sandbox has an egress proxy of this
// repository's, for a delete that lost the sandbox's record.
func (p *Proxies) Owns(ctx context.Context, n hostrepo.Names) bool {
	in, err := p.proxy(n).Inspect(ctx)
	return err == nil && in.Labels[hostrepo.LabelManaged] == Role && in.Labels[hostrepo.LabelRepoID] == p.Agent.Repo.RepoID && p.Agent.Repo.RepoID != ""
}

// Follow pauses, or unpauses and starts, the egress proxy of a
// sandbox of this repository that has one, after the sandbox's container.
func (p *Proxies) Follow(ctx context.Context, slug, container string, pause bool) error {
	n := p.Agent.Repo.Names(slug)
	if container != n.Container {
		return nil // another repository's sandbox: its record is not here
	}
	rec, err := p.Agent.Repo.Store().Load(slug)
	if err != nil || rec == nil || rec.Allow == nil || !p.Agent.Repo.Provider.Caps().EgressProxy {
		return err // no proxy
	}
	proxy := p.proxy(n)
	if pause {
		if err := proxy.Pause(ctx); err != nil && !errors.Is(err, box.ErrAlreadyPaused) && !errors.Is(err, box.ErrNotRunning) {
			return fmt.Errorf("pausing the egress proxy of '%s': %w", slug, err)
		}
		return nil
	}
	err = proxy.Unpause(ctx)
	if !errors.Is(err, box.ErrNotPaused) {
		if err != nil {
			return fmt.Errorf("resuming the egress proxy of '%s' (litterbox delete %s, then create it again): %w", slug, slug, err)
		}
		return nil
	}
	if err := proxy.Start(ctx); err != nil {
		return fmt.Errorf("resuming the egress proxy of '%s' (litterbox delete %s, then create it again): %w", slug, slug, err)
	}
	// A started proxy has lost what it held in memory.
	return p.Inject(ctx, n, rec)
}

// Activity is what the egress proxy of a sandbox did since a time: the
// connections it refused, by host:port, and the secrets it injected, by
// "SECRET@host".
type Activity struct {
	Refused, Injected map[string]int
}

// ActivityOf reads the egress proxy of sandbox name for what it did since
// since (all it logged when zero); nothing for a sandbox without one.
func (p *Proxies) ActivityOf(ctx context.Context, name string, since time.Time) (Activity, error) {
	slug, err := hostrepo.ParseName(name)
	if err != nil {
		return Activity{}, err
	}
	rec, err := p.Agent.Repo.Store().Load(slug)
	if err != nil || rec == nil || rec.Allow == nil || !p.Agent.Repo.Provider.Caps().EgressProxy {
		return Activity{}, err // no proxy to ask
	}
	log, err := p.log(ctx, slug, since)
	if err != nil {
		return Activity{}, err
	}
	return Activity{Refused: egress.CountRefusals(log), Injected: egress.CountInjected(log)}, nil
}

// Refusals reads the Refusals of the egress proxy of sandbox slug, which
// has one.
func (p *Proxies) Refusals(ctx context.Context, slug string, since time.Time) (map[string]int, error) {
	log, err := p.log(ctx, slug, since)
	if err != nil {
		return nil, err
	}
	return egress.CountRefusals(log), nil
}

// log is what the egress proxy of sandbox slug printed since since.
func (p *Proxies) log(ctx context.Context, slug string, since time.Time) ([]byte, error) {
	log, err := box.Egress(p.Agent.Repo.Provider).Logs(ctx, p.Agent.Repo.Names(slug).Egress(), since)
	if err != nil {
		return nil, fmt.Errorf("reading the egress proxy's log of '%s': %w", slug, err)
	}
	return log, nil
}

// RefusedSummary writes refusal counts for people, most refused first:
// "denied.test:80 (3x), 10.0.0.1:443 (1x)".
func RefusedSummary(counts map[string]int) string {
	hosts := slices.Sorted(maps.Keys(counts))
	slices.SortStableFunc(hosts, func(a, b string) int { return counts[b] - counts[a] })
	parts := make([]string, len(hosts))
	for i, h := range hosts {
		parts[i] = fmt.Sprintf("%s (%dx)", h, counts[h])
	}
	return strings.Join(parts, ", ")
}

// SetupNetworkOf says what network the setup command alone had.
func SetupNetworkOf(cfg config.Config) string {
	switch {
	case cfg.SetupOpensNetwork():
		return "the whole network"
	case cfg.SetupAllow != nil:
		return "its own allowlist (" + strings.Join(cfg.SetupAllow, ", ") + ")"
	}
	return ""
}

// NetworkOf is the network a sandbox reports: "allow" for an allowlist.
func NetworkOf(cfg config.Config) string {
	if cfg.Allow != nil {
		return "allow"
	}
	return cfg.Network
}
