// Package servicectl is a sandbox's services and background commands as
// the agent and the CLI ask for them: started at create and resume,
// acted on by name, their logs read, each action in its sandbox's turn and
// with its secrets. internal/services is what runs them inside the box.
package servicectl

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/secrets"
	"github.com/litterbox-dev/litterbox/internal/services"
	"github.com/litterbox-dev/litterbox/internal/slug"
	"github.com/litterbox-dev/litterbox/runner"
)

// box is the services of a sandbox whose container is container (resume
// may start sandboxes of other repositories, so it is not always ours:
// ours goes through its own handle, with what the handle adds).
func boxOf(ctx context.Context, r *hostrepo.Repo, slug, container string, specs map[string]config.ServiceSpec, sec *secrets.Values) *services.Box {
	b := box.Of(r.Provider, container)
	if n := r.Names(slug); n.Container == container {
		b = r.CallBox(n)
	}
	return &services.Box{
		Box: b, Sandbox: slug, Specs: specs, Secrets: sec.Env(),
		EngineErr: func(err error) error { return agent.ExecError(ctx, r, slug, err) },
	}
}

// serviceToken tells one start apart from every other.
func serviceToken(r *hostrepo.Repo) string {
	return fmt.Sprintf("%x-%d", r.Now().UnixNano(), r.Seq())
}

// Start starts the services of specs and checks they stay up.
func Start(ctx context.Context, r *hostrepo.Repo, slug, container string, specs map[string]config.ServiceSpec) ([]services.State, error) {
	var sec *secrets.Values
	if container == r.Names(slug).Container {
		var err error
		if sec, err = r.SecretsFor(ctx, slug); err != nil {
			return nil, err
		}
	}
	b := boxOf(ctx, r, slug, container, specs, sec)
	states, err := b.Start(ctx, slices.Sorted(maps.Keys(specs)), serviceToken(r))
	if err != nil {
		return nil, err
	}
	return states, b.CheckStarted(ctx, states)
}

// Control runs action on one service of a sandbox; status with no service
// reports them all.
func Control(ctx context.Context, r *hostrepo.Repo, name, action, service string) ([]services.State, error) {
	slug, err := r.Resolve(name)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(services.Actions, action) {
		return nil, fmt.Errorf("unknown service action %q: want %s or logs", action, strings.Join(services.Actions, ", "))
	}
	rec, err := r.Store().Load(slug)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, r.MissingOrNotFound(ctx, slug)
	}
	names, err := services.Pick(slug, rec.Services, action, service)
	if err != nil {
		return nil, err
	}
	unlock, err := lockTurn(ctx, r, slug, action == services.Start || action == services.Restart)
	if err != nil {
		return nil, err
	}
	defer unlock()
	var sec *secrets.Values
	if action == services.Start || action == services.Restart {
		if sec, err = r.SecretsFor(ctx, slug); err != nil {
			return nil, err
		}
	}
	b := boxOf(ctx, r, slug, r.Names(slug).Container, rec.Services, sec)
	var states []services.State
	switch action {
	case services.Status:
		return b.Status(ctx, names)
	case services.Start:
		states, err = b.Start(ctx, names, serviceToken(r))
	case services.Stop:
		return b.Stop(ctx, service)
	case services.Restart:
		states, err = b.Restart(ctx, service, func() string { return serviceToken(r) })
	}
	if err != nil {
		return nil, err
	}
	return states, b.CheckStarted(ctx, states)
}

// Logs writes a service's log (its last lines, when lines > 0) to w.
//
// Unless raw, what a terminal would act on is written out as escapes (see
// Escaped): a service prints what the agent made it print, and an OSC 52
// sequence in its log would write the reviewer's clipboard.
func Logs(ctx context.Context, r *hostrepo.Repo, name, service string, lines int, raw bool, w io.Writer) error {
	slug, err := r.Resolve(name)
	if err != nil {
		return err
	}
	rec, err := r.Store().Load(slug)
	if err != nil {
		return err
	}
	if rec == nil {
		return r.MissingOrNotFound(ctx, slug)
	}
	if _, err := services.Pick(slug, rec.Services, "logs", service); err != nil {
		return err
	}
	if err := r.EnsureOwn(ctx, slug); err != nil {
		return err
	}
	sec, err := r.SecretsFor(ctx, slug)
	if err != nil {
		return err
	}
	out, err := boxOf(ctx, r, slug, r.Names(slug).Container, rec.Services, nil).Logs(ctx, service, lines)
	if err != nil {
		return err
	}
	text := sec.Redact(string(out))
	if !raw {
		text = agenttext.Inert(text)
	}
	_, err = io.WriteString(w, text)
	return err
}

// lockTurn takes the services lock of sandbox slug and, for an action
// that starts a process (spawn), the call's turn before it; the func it
// returns lets both go.
func lockTurn(ctx context.Context, r *hostrepo.Repo, slug string, spawn bool) (func(), error) {
	unlockCall := func() {}
	if spawn {
		var err error
		if unlockCall, err = lockSpawn(ctx, r, slug); err != nil {
			return nil, err
		}
	}
	unlock, err := lockServices(ctx, r, slug)
	if err != nil {
		unlockCall()
		return nil, err
	}
	return func() { unlock(); unlockCall() }, nil
}

// lockServices takes the turn of a sandbox of this repository's for its
// services. Service calls on one sandbox take turns, but not with file
// changes: a stop may wait out a grace period.
func lockServices(ctx context.Context, r *hostrepo.Repo, slug string) (func(), error) {
	if err := r.EnsureOwn(ctx, slug); err != nil {
		return nil, err
	}
	return r.LockNamed(ctx, slug, slug+".services")
}

// lockSpawn takes the sandbox's call turn for a service start. A call ends
// by killing every process that appeared during it and hangs below its
// helper or PID 1 (see procgroup.Strays); a service started by a detached
// exec on Kubernetes is such an orphan, so it must not start while a call
// runs, or that call's end would take it for an escapee. It is taken
// before the services lock, never after, so the two cannot deadlock.
func lockSpawn(ctx context.Context, r *hostrepo.Repo, slug string) (func(), error) {
	return r.Lock(ctx, slug)
}

// MaxBackground bounds the background commands a sandbox remembers.
const MaxBackground = 50

// Background starts command o.Command as a service of the agent's own,
// named service (or after the command's program), and returns its state
// once it runs: status, logs, stop and restart then work on it as on a
// configured service. It is not started again when the sandbox is.
func Background(ctx context.Context, r *hostrepo.Repo, name, service string, o agent.BashOptions) (*services.State, error) {
	slug, err := r.Resolve(name)
	if err != nil {
		return nil, err
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if service != "" && !config.ValidServiceName(service) {
		return nil, fmt.Errorf("service name %q: use letters, digits, '.', '_' and '-' (at most 63)", service)
	}
	cmd := o.Command
	if o.Workdir != "" {
		cmd = "cd " + runner.Quote(agent.ResolvePath(o.Workdir)) + " && " + cmd
	}
	unlock, err := lockTurn(ctx, r, slug, true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rec, err := r.Store().Load(slug)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, r.MissingOrNotFound(ctx, slug)
	}
	sec, err := r.SecretsFor(ctx, slug)
	if err != nil {
		return nil, err
	}
	box := boxOf(ctx, r, slug, r.Names(slug).Container, rec.Services, sec)
	if service == "" {
		if service, err = backgroundName(ctx, box, rec.Services, o.Command); err != nil {
			return nil, err
		}
	} else if s, ok := rec.Services[service]; ok && !s.Background {
		return nil, fmt.Errorf("service %q is configured in %s; give the background command another name", service, config.File)
	}
	if _, ok := rec.Services[service]; !ok && countBackground(rec.Services) >= MaxBackground {
		return nil, fmt.Errorf("sandbox '%s' has %d background commands; reuse a name (a stopped one is replaced)", slug, MaxBackground)
	}
	if rec.Services == nil {
		rec.Services = map[string]config.ServiceSpec{}
	}
	rec.Services[service] = config.ServiceSpec{Command: []string{"sh", "-c", cmd}, Stop: config.DefaultStopSignal, StopTimeout: 5, Background: true}
	if err := r.Store().Save(rec); err != nil {
		return nil, err
	}
	box.Specs = rec.Services
	states, err := box.Start(ctx, []string{service}, serviceToken(r))
	if err != nil {
		return nil, err
	}
	return &states[0], box.CheckStarted(ctx, states)
}

// backgroundName names a background command after its program, with a
// number when a running one has that name already.
func backgroundName(ctx context.Context, box *services.Box, specs map[string]config.ServiceSpec, command string) (string, error) {
	base := "bg"
	if f := strings.Fields(command); len(f) > 0 {
		if s := slug.Make(path.Base(f[0])); s != "" {
			base = s[:min(len(s), 40)]
		}
	}
	for i := 1; ; i++ {
		n := base
		if i > 1 {
			n = fmt.Sprintf("%s-%d", base, i)
		}
		s, ok := specs[n]
		if !ok {
			return n, nil
		}
		if !s.Background {
			continue
		}
		states, err := box.Status(ctx, []string{n})
		if err != nil {
			return "", err
		}
		if states[0].State != services.Running {
			return n, nil // a stopped one is replaced
		}
	}
}

// BackgroundOf names the background commands a sandbox's record holds.
func BackgroundOf(rec *layout.Record) []string {
	if rec == nil {
		return nil
	}
	var names []string
	for _, n := range slices.Sorted(maps.Keys(rec.Services)) {
		if rec.Services[n].Background {
			names = append(names, n)
		}
	}
	return names
}

func countBackground(specs map[string]config.ServiceSpec) int {
	n := 0
	for _, s := range specs {
		if s.Background {
			n++
		}
	}
	return n
}
