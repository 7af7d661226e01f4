package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	"github.com/litterbox-dev/litterbox/config"
	"github.com/litterbox-dev/litterbox/dockercli"
)

// Host ports handed out to [[ports]] entries, and the only address they are
// published on.
const (
	PortRangeLow  = 3000
	PortRangeHigh = 8000
	PortHostIP    = "127.0.0.1"
)

// LabelPorts carries a sandbox's port map on its container, so list and
// allocation read every sandbox's ports from one `docker ps`.
const LabelPorts = "dev.litterbox.ports"

// LabelServices carries the service definitions, so a resume after an engine
// restart can start them again whichever repository the container belongs to.
const LabelServices = "dev.litterbox.services"

// Port is a named port published to the host.
type Port struct {
	Name          string `json:"name"`
	ContainerPort int    `json:"container_port"`
	HostPort      int    `json:"host_port"`
	// Env names the variables holding HostPort inside the container.
	Env []string `json:"env"`
	// Address is where a browser on the engine's machine reaches it.
	Address string `json:"address"`
	// EngineHost is set when the engine runs on another machine: the port
	// is on that machine's loopback, reachable through an SSH tunnel.
	EngineHost string `json:"engine_host,omitempty"`
}

// Reach says how to open the port from this machine.
func (p Port) Reach() string {
	if p.EngineHost == "" {
		return "http://" + p.Address
	}
	return fmt.Sprintf("http://%s on %s (from here: ssh -L %d:%s %s)", p.Address, p.EngineHost, p.HostPort, p.Address, p.EngineHost)
}

func portsLabel(ports []Port) string {
	if len(ports) == 0 {
		return ""
	}
	return string(mustJSON(ports))
}

func parsePortsLabel(s string) []Port {
	var ports []Port
	if s == "" || json.Unmarshal([]byte(s), &ports) != nil {
		return []Port{}
	}
	return ports
}

// portEnv is what a sandbox's container gets for its ports.
func portEnv(ports []Port) map[string]string {
	env := map[string]string{}
	for _, p := range ports {
		for _, k := range p.Env {
			env[k] = strconv.Itoa(p.HostPort)
		}
	}
	return env
}

// NoFreePortError is a port map that cannot be filled.
type NoFreePortError struct{ Name string }

func (e *NoFreePortError) Error() string {
	return fmt.Sprintf("no free host port in %d-%d for port %q: every one is in use on this machine or by another sandbox", PortRangeLow, PortRangeHigh, e.Name)
}

// takenPorts returns the host ports other sandboxes on this machine hold,
// running or not: a stopped sandbox gets its ports back when it starts.
func (m *Manager) takenPorts(ctx context.Context) (map[int]bool, error) {
	cts, err := m.Provider.List(ctx, map[string]string{LabelManaged: "true"}, []string{LabelPorts})
	if err != nil {
		return nil, err
	}
	taken := map[int]bool{}
	for _, c := range cts {
		for _, p := range parsePortsLabel(c.Labels[LabelPorts]) {
			taken[p.HostPort] = true
		}
	}
	return taken, nil
}

// allocatePorts picks a free host port for each spec, in random order through
// the range so that concurrent creates rarely pick the same one (the engine
// refuses the loser, which then tries again).
func allocatePorts(specs []config.PortSpec, taken map[int]bool, startAt func(int) int, free func(int) bool) ([]Port, error) {
	if startAt == nil {
		startAt = rand.IntN
	}
	if free == nil {
		free = hostPortFree
	}
	ports := make([]Port, 0, len(specs))
	span := PortRangeHigh - PortRangeLow + 1
	start := startAt(span)
	next := 0
	for _, s := range specs {
		found := 0
		for ; next < span; next++ {
			hp := PortRangeLow + (start+next)%span
			if taken[hp] || !free(hp) {
				continue
			}
			found = hp
			next++
			break
		}
		if found == 0 {
			return nil, &NoFreePortError{Name: s.Name}
		}
		suffix := s.EnvSuffix()
		ports = append(ports, Port{
			Name: s.Name, ContainerPort: s.Target, HostPort: found,
			Env:     []string{"LITTERBOX_FWD_PORT_" + suffix, "PORT_" + suffix},
			Address: net.JoinHostPort(PortHostIP, strconv.Itoa(found)),
		})
	}
	return ports, nil
}

// hostPortFree reports whether nothing listens on the loopback port; a
// listener on any address holds it too.
func hostPortFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(PortHostIP, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func bindings(ports []Port) []dockercli.PortBinding {
	var b []dockercli.PortBinding
	for _, p := range ports {
		b = append(b, dockercli.PortBinding{HostIP: PortHostIP, HostPort: p.HostPort, ContainerPort: p.ContainerPort})
	}
	return b
}

// Ports returns the port map of a sandbox.
func (m *Manager) Ports(ctx context.Context, name string) ([]Port, error) {
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
