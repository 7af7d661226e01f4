// Package ports gives a sandbox's [[ports]] entries host ports: free ones in
// a fixed range, published on 127.0.0.1 only, in random order so that
// concurrent creates rarely pick the same one, and recorded in a container
// label so one `docker ps` tells which are taken.
package ports

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
)

// Host ports handed out to [[ports]] entries, and the only address they are
// published on.
const (
	RangeLow  = 3000
	RangeHigh = 8000
	HostIP    = "127.0.0.1"
)

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

// Label is the label value that records ports on a container.
func Label(ports []Port) string {
	if len(ports) == 0 {
		return ""
	}
	return mustJSON(ports)
}

// ParseLabel reads a Label value; anything else is no ports.
func ParseLabel(s string) []Port {
	var ports []Port
	if s == "" || json.Unmarshal([]byte(s), &ports) != nil {
		return []Port{}
	}
	return ports
}

// Env is what a sandbox's container gets for its ports.
func Env(ports []Port) map[string]string {
	env := map[string]string{}
	for _, p := range ports {
		for _, k := range p.Env {
			env[k] = strconv.Itoa(p.HostPort)
		}
	}
	return env
}

// NoFreeError is a port map that cannot be filled.
type NoFreeError struct{ Name string }

func (e *NoFreeError) Error() string {
	return fmt.Sprintf("no free host port in %d-%d for port %q: every one is in use on this machine or by another sandbox", RangeLow, RangeHigh, e.Name)
}

// Allocate picks a free host port for each spec, in random order through
// the range so that concurrent creates rarely pick the same one (the engine
// refuses the loser, which then tries again).
func Allocate(specs []config.PortSpec, taken map[int]bool, startAt func(int) int, free func(int) bool) ([]Port, error) {
	if startAt == nil {
		startAt = rand.IntN
	}
	if free == nil {
		free = HostFree
	}
	ports := make([]Port, 0, len(specs))
	span := RangeHigh - RangeLow + 1
	start := startAt(span)
	next := 0
	for _, s := range specs {
		found := 0
		for ; next < span; next++ {
			hp := RangeLow + (start+next)%span
			if taken[hp] || !free(hp) {
				continue
			}
			found = hp
			next++
			break
		}
		if found == 0 {
			return nil, &NoFreeError{Name: s.Name}
		}
		suffix := s.EnvSuffix()
		ports = append(ports, Port{
			Name: s.Name, ContainerPort: s.Target, HostPort: found,
			Env:     []string{"LITTERBOX_FWD_PORT_" + suffix, "PORT_" + suffix},
			Address: net.JoinHostPort(HostIP, strconv.Itoa(found)),
		})
	}
	return ports, nil
}

// HostFree reports whether nothing listens on the loopback port; a
// listener on any address holds it too.
func HostFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort(HostIP, strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// Bindings are the engine's --publish options for ports.
func Bindings(ports []Port) []box.PortBinding {
	var b []box.PortBinding
	for _, p := range ports {
		b = append(b, box.PortBinding{HostIP: HostIP, HostPort: p.HostPort, ContainerPort: p.ContainerPort})
	}
	return b
}

// mustJSON is indented, as the labels of sandboxes made before this package
// were.
func mustJSON(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return string(data) + "\n"
}
