package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/ports"
)

// LabelPorts carries a sandbox's port map on its container, so list and
// allocation read every sandbox's ports from one `docker ps`.
const LabelPorts = "dev.litterbox.ports"

// LabelServices carries the service definitions, so a resume after an engine
// restart can start them again whichever repository the container belongs to.
const LabelServices = "dev.litterbox.services"

// TakenPorts returns the host ports other sandboxes on this machine hold,
// running or not: a stopped sandbox gets its ports back when it starts.
func (m *Manager) TakenPorts(ctx context.Context) (map[int]bool, error) {
	cts, err := m.Repo.Provider.List(ctx, map[string]string{hostrepo.LabelManaged: "true"}, []string{LabelPorts})
	if err != nil {
		return nil, err
	}
	taken := map[int]bool{}
	for _, c := range cts {
		for _, p := range ports.ParseLabel(c.Labels[LabelPorts]) {
			taken[p.HostPort] = true
		}
	}
	return taken, nil
}

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
	return orEmpty(rec.Ports), nil
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

// AllocatePorts picks a free host port for each of specs, none of them in
// taken.
func (m *Manager) AllocatePorts(specs []config.PortSpec, taken map[int]bool) ([]ports.Port, error) {
	return ports.Allocate(specs, taken, m.portStart, m.portFree)
}
