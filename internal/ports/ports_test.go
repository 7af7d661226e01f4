package ports

import (
	"errors"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
)

func TestAllocatePortsSkipsTakenAndBusy(t *testing.T) {
	specs := []config.PortSpec{{Name: "www", Target: 8080}, {Name: "api", Target: 9000}}
	taken := map[int]bool{RangeHigh: true}
	busy := func(p int) bool { return p != RangeLow } // only 3000 is in use on the host
	// Start at the top of the range: 8000 is taken, so the search wraps.
	ports, err := Allocate(specs, taken, func(n int) int { return n - 1 }, func(p int) bool { return busy(p) })
	if err != nil {
		t.Fatal(err)
	}
	if ports[0].HostPort != 3001 || ports[1].HostPort != 3002 {
		t.Fatalf("got %d and %d, want 3001 and 3002", ports[0].HostPort, ports[1].HostPort)
	}
	if ports[0].Address != "127.0.0.1:3001" || ports[1].Env[1] != "PORT_API" || ports[1].ContainerPort != 9000 {
		t.Fatalf("got %+v", ports)
	}
}

func TestAllocatePortsNeverGivesOnePortTwice(t *testing.T) {
	specs := make([]config.PortSpec, 50)
	for i := range specs {
		specs[i] = config.PortSpec{Name: string(rune('a'+i%26)) + string(rune('a'+i/26)), Target: 80}
	}
	ports, err := Allocate(specs, nil, nil, func(int) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p.HostPort] || p.HostPort < RangeLow || p.HostPort > RangeHigh {
			t.Fatalf("port %d twice or out of range", p.HostPort)
		}
		seen[p.HostPort] = true
	}
}

func TestAllocatePortsNoFreePort(t *testing.T) {
	_, err := Allocate([]config.PortSpec{{Name: "www", Target: 80}}, nil, nil, func(int) bool { return false })
	var nf *NoFreeError
	if !errors.As(err, &nf) || nf.Name != "www" {
		t.Fatalf("err = %v, want NoFreeError for www", err)
	}
}

func TestPortsLabelRoundTrip(t *testing.T) {
	ports, _ := Allocate([]config.PortSpec{{Name: "www", Target: 8080}}, nil, nil, func(int) bool { return true })
	if got := ParseLabel(Label(ports)); len(got) != 1 || got[0].HostPort != ports[0].HostPort {
		t.Fatalf("round trip: %+v", got)
	}
	if got := ParseLabel("not json"); len(got) != 0 {
		t.Fatalf("garbage label gave %+v", got)
	}
}
