package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/ports"
)

// Ports returns the port map of a sandbox.
func (m *Manager) Ports(ctx context.Context, name string) ([]ports.Port, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, err
	}
	rec, err := m.Repo.Store().Load(slug)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, m.Repo.MissingOrNotFound(ctx, slug)
	}
	return orNoPorts(rec.Ports), nil
}

// forwarder is a provider whose ports are reached through a forwarding
// process the user runs (kubectl port-forward), not published by the
// engine.
type forwarder interface {
	PortForward(ctx context.Context, container string, pairs []string, out io.Writer) error
}

// ErrNothingToForward is Forward on a runtime that publishes ports itself.
var ErrNothingToForward = errors.New("this runtime publishes [[ports]] on the host itself (see litterbox ports); --forward is for --runtime kubernetes")

// Forward forwards the sandbox's ports from 127.0.0.1 on this machine to
// its pod until ctx ends: on Kubernetes, a sandbox's ports are reached this
// way, by a process the user sees and stops.
func (m *Manager) Forward(ctx context.Context, name string, out io.Writer) error {
	f, ok := m.Repo.Provider.(forwarder)
	if !ok {
		return ErrNothingToForward
	}
	pmap, err := m.Ports(ctx, name)
	if err != nil {
		return err
	}
	if len(pmap) == 0 {
		return fmt.Errorf("sandbox '%s' has no [[ports]] to forward", name)
	}
	slug, _ := m.Repo.Resolve(name)
	n, in, err := m.Repo.OwnContainer(ctx, slug)
	if err != nil {
		return err
	}
	if in.State != "running" {
		return agent.NotRunning(slug, in.State)
	}
	var pairs []string
	for _, p := range pmap {
		pairs = append(pairs, fmt.Sprintf("%d:%d", p.HostPort, p.ContainerPort))
	}
	return f.PortForward(ctx, n.Container, pairs, out)
}

// orNoPorts is pmap, or an empty map for none (JSON [], not null).
func orNoPorts(pmap []ports.Port) []ports.Port {
	if pmap == nil {
		return []ports.Port{}
	}
	return pmap
}
