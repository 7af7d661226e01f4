package create

import (
	"context"

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
func (m *Creator) TakenPorts(ctx context.Context) (map[int]bool, error) {
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

// AllocatePorts picks a free host port for each of specs, none of them in
// taken.
func (m *Creator) AllocatePorts(specs []config.PortSpec, taken map[int]bool) ([]ports.Port, error) {
	return ports.Allocate(specs, taken, m.PortStart, m.PortFree)
}
