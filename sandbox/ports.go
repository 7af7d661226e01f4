package sandbox

import (
	"context"

	"github.com/litterbox-dev/litterbox/ports"
)

// LabelPorts carries a sandbox's port map on its container, so list and
// allocation read every sandbox's ports from one `docker ps`.
const LabelPorts = "dev.litterbox.ports"

// LabelServices carries the service definitions, so a resume after an engine
// restart can start them again whichever repository the container belongs to.
const LabelServices = "dev.litterbox.services"

// takenPorts returns the host ports other sandboxes on this machine hold,
// running or not: a stopped sandbox gets its ports back when it starts.
func (m *Manager) takenPorts(ctx context.Context) (map[int]bool, error) {
	cts, err := m.Provider.List(ctx, map[string]string{LabelManaged: "true"}, []string{LabelPorts})
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
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	rec, err := m.store().load(slug)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, m.missingOrNotFound(ctx, slug)
	}
	return orEmpty(rec.Ports), nil
}
