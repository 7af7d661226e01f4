//go:build linux

package helper

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/internal/egress"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// proxy serves the egress proxy on addr (host:port, or unix:PATH) for the
// allowlist entries in allow (comma-separated) until the process ends.
func proxy(addr, allow string, stdout io.Writer) error {
	var entries []string
	if allow != "" {
		entries = strings.Split(allow, ",")
	}
	list, err := egress.Parse(entries)
	if err != nil {
		return &toolError{exitUsage, err.Error()}
	}
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	p := &egress.Proxy{Allow: list, Refused: func(host string, port int) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(egress.Refusal{Time: time.Now().UTC(), Refused: net.JoinHostPort(host, strconv.Itoa(port))})
	}}
	var l net.Listener
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		os.Remove(path)
		if l, err = net.Listen("unix", path); err == nil {
			// The sandbox's user connects, whoever it is.
			err = os.Chmod(path, 0o666)
		}
	} else {
		l, err = net.Listen("tcp", addr)
	}
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	return srv.Serve(l)
}

// forwardEgress is PID 1's part in a sandbox with an allowlist: it relays
// connections to its loopback port to the egress proxy's socket. It holds
// no policy; the proxy does.
func forwardEgress(socket string) {
	l, err := net.Listen("tcp", "127.0.0.1:"+protocol.EgressPort)
	if err != nil {
		fmt.Fprintln(os.Stderr, protocol.Name+": egress:", err)
		return
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			up, err := net.DialTimeout("unix", socket, 5*time.Second)
			if err != nil {
				// What the client reads: an HTTP answer, for a proxy client.
				fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nlitterbox: the sandbox's egress proxy does not answer: %v\n", err)
				c.Close()
				return
			}
			egress.Splice(c, up)
		}()
	}
}
