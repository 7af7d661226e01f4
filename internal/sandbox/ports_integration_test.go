//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/ports"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// Two creates that pick the same free host port at once: the engine refuses
// one, which tries other ports, and both sandboxes end up with their own.
func TestIntegrationConcurrentCreatesRacingForOnePort(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	m.Repo.Config.Network = "bridge"
	m.Repo.Config.Ports = []config.PortSpec{{Name: "www", Target: 8080}}
	// Every create starts its search at the same port and sees it free (the
	// other create has not published it yet): the race, made certain.
	m.Creator.PortStart = func(int) int { return 7777 - ports.RangeLow }
	m.Creator.PortFree = ports.HostFree

	var wg sync.WaitGroup
	created := make([]*create.Created, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			created[i], errs[i] = m.Create(ctx, create.CreateOptions{Name: fmt.Sprintf("racer-%d", i)})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	a, b := created[0].Ports[0].HostPort, created[1].Ports[0].HostPort
	if a == b {
		t.Fatalf("both sandboxes got host port %d", a)
	}
	for _, c := range created {
		port := c.Ports[0].HostPort
		inspect, err := testenv.Docker("inspect", "--format", `{{json .HostConfig.PortBindings}}`, c.Container)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"8080/tcp":[{"HostIp":"127.0.0.1","HostPort":"` + strconv.Itoa(port) + `"}]}`; inspect != want {
			t.Errorf("%s bindings %s, want %s", c.Name, inspect, want)
		}
		env := exec(t, m, c.Name, "echo $PORT_WWW $LITTERBOX_FWD_PORT_WWW")
		if want := fmt.Sprintf("%d %d\n", port, port); env != want {
			t.Errorf("%s env %q, want %q", c.Name, env, want)
		}
	}
	// A third create sees both ports taken, through the labels, before it
	// asks the engine.
	taken, err := m.Creator.TakenPorts(ctx)
	if err != nil || !taken[a] || !taken[b] {
		t.Fatalf("takenPorts %v %v, want %d and %d", taken, err, a, b)
	}
}

func TestIntegrationHostPortFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if ports.HostFree(l.Addr().(*net.TCPAddr).Port) {
		t.Fatal("a port with a listener was reported free")
	}
}

// When the engine refuses a port (something took it after the check), create
// removes the half-made container and tries the next port.
func TestIntegrationCreateRetriesWhenTheEngineRefusesAPort(t *testing.T) {
	ctx := context.Background()
	// A listener on a port inside the range, where the search will start.
	var l net.Listener
	for p := 7000 + os.Getpid()%900; l == nil; p++ {
		l, _ = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
	}
	defer l.Close()
	busy := l.Addr().(*net.TCPAddr).Port

	m := realManager(t)
	m.Repo.Config.Network = "bridge"
	m.Repo.Config.Ports = []config.PortSpec{{Name: "www", Target: 8080}}
	m.Creator.PortStart = func(int) int { return busy - ports.RangeLow }
	m.Creator.PortFree = func(int) bool { return true } // the check is fooled
	c, err := m.Create(ctx, create.CreateOptions{Name: "retry"})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Ports[0].HostPort; got != busy+1 {
		t.Fatalf("host port %d, want %d (the one after the refused %d)", got, busy+1, busy)
	}
}
