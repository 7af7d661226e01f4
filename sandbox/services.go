package sandbox

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/config"
	"github.com/litterbox-dev/litterbox/services"
)

// box is the services of a sandbox whose container is container (resume
// may start sandboxes of other repositories, so it is not always ours).
func (m *Manager) box(ctx context.Context, slug, container string, specs map[string]config.ServiceSpec) *services.Box {
	return &services.Box{
		Exec: m.Provider, Container: container, Sandbox: slug, Specs: specs,
		EngineErr: func(err error) error { return m.execError(ctx, slug, err) },
	}
}

// serviceToken tells one start apart from every other.
func (m *Manager) serviceToken() string {
	return fmt.Sprintf("%x-%d", m.Now().UnixNano(), m.startSeq.Add(1))
}

// startServices starts the services of specs and checks they stay up.
func (m *Manager) startServices(ctx context.Context, slug, container string, specs map[string]config.ServiceSpec) ([]services.State, error) {
	b := m.box(ctx, slug, container, specs)
	states, err := b.Start(ctx, slices.Sorted(maps.Keys(specs)), m.serviceToken())
	if err != nil {
		return nil, err
	}
	return states, b.CheckStarted(ctx, states)
}

// Service runs action on one service of a sandbox; status with no service
// reports them all.
func (m *Manager) Service(ctx context.Context, name, action, service string) ([]services.State, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(services.Actions, action) {
		return nil, fmt.Errorf("unknown service action %q: want %s or logs", action, strings.Join(services.Actions, ", "))
	}
	rec, err := m.store().load(slug)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, m.missingOrNotFound(ctx, slug)
	}
	names, err := services.Pick(slug, rec.Services, action, service)
	if err != nil {
		return nil, err
	}
	// Service calls on one sandbox take turns, but not with file changes: a
	// stop may wait out a grace period.
	if err := m.ensureOwn(ctx, slug); err != nil {
		return nil, err
	}
	unlock, err := m.lockNamed(ctx, slug, slug+".services")
	if err != nil {
		return nil, err
	}
	defer unlock()
	b := m.box(ctx, slug, m.Names(slug).Container, rec.Services)
	var states []services.State
	switch action {
	case services.Status:
		return b.Status(ctx, names)
	case services.Start:
		states, err = b.Start(ctx, names, m.serviceToken())
	case services.Stop:
		return b.Stop(ctx, service)
	case services.Restart:
		states, err = b.Restart(ctx, service, m.serviceToken)
	}
	if err != nil {
		return nil, err
	}
	return states, b.CheckStarted(ctx, states)
}

// ServiceLogs writes a service's log (its last lines, when lines > 0) to w.
func (m *Manager) ServiceLogs(ctx context.Context, name, service string, lines int, w io.Writer) error {
	slug, err := m.resolve(name)
	if err != nil {
		return err
	}
	rec, err := m.store().load(slug)
	if err != nil {
		return err
	}
	if rec == nil {
		return m.missingOrNotFound(ctx, slug)
	}
	if _, err := services.Pick(slug, rec.Services, "logs", service); err != nil {
		return err
	}
	if err := m.ensureOwn(ctx, slug); err != nil {
		return err
	}
	out, err := m.box(ctx, slug, m.Names(slug).Container, rec.Services).Logs(ctx, service, lines)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}
