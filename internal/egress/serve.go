package egress

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Serve serves the egress proxy on addr (host:port, or unix:PATH) for the
// allowlist list until the process ends, taking the secrets it injects on
// the socket control when set. It logs each refusal and injection to
// stdout as a JSON line.
func Serve(addr string, list Allowlist, control string, stdout io.Writer) error {
	var err error
	var mu sync.Mutex
	enc := json.NewEncoder(stdout)
	p := &Proxy{Allow: list, Refused: func(host string, port int) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(Refusal{Time: time.Now().UTC(), Refused: net.JoinHostPort(host, strconv.Itoa(port))})
	}}
	if control != "" {
		ctl, err := net.Listen("unix", control)
		if err != nil {
			return err
		}
		trust := ""
		if path, ok := strings.CutPrefix(addr, "unix:"); ok {
			trust = filepath.Dir(path)
		}
		logLine := func(v any) {
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(v)
		}
		go serveControl(ctl, p, trust, func(in *Injector) {
			in.Used = func(secret, host string) {
				logLine(Injected{Time: time.Now().UTC(), Injected: secret, Host: host})
			}
			in.Leaked = func(secret, host string) {
				logLine(Refusal{Time: time.Now().UTC(), Refused: host, Secret: secret})
			}
		})
	}
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

// Forward is PID 1's part in a sandbox with an allowlist: it relays
// connections to addr, its loopback port, to the egress proxy's socket
// until the listener fails. It holds no policy; the proxy does.
func Forward(addr, socket string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go func() {
			up, err := net.DialTimeout("unix", socket, 5*time.Second)
			if err != nil {
				// What the client reads: an HTTP answer, for a proxy client.
				fmt.Fprintf(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nlitterbox: the sandbox's egress proxy does not answer: %v\n", err)
				c.Close()
				return
			}
			Splice(c, up)
		}()
	}
}

// serveControl takes, on l, the secrets the proxy injects (an
// Secrets message, then the end of the writer's half): from then on
// the proxy gives them to their hosts, and the sandbox's trust files in
// trustDir (the socket's directory, which the sandbox mounts) hold its CA.
// Each message replaces the last (the host sends them again after a
// restart). The answer is "ok", or the reason.
func serveControl(l net.Listener, p *Proxy, trustDir string, logs func(*Injector)) {
	for {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		err = loadSecrets(conn, p, trustDir, logs)
		answer := "ok\n"
		if err != nil {
			answer = err.Error() + "\n"
		}
		_, _ = io.WriteString(conn, answer)
		conn.Close()
	}
}

func loadSecrets(r io.Reader, p *Proxy, trustDir string, logs func(*Injector)) error {
	s, err := ReadSecrets(r)
	if err != nil {
		return err
	}
	in, err := s.Injector()
	if err != nil {
		return err
	}
	if trustDir != "" {
		if err := WriteTrust(trustDir, []byte(s.CACert)); err != nil {
			return fmt.Errorf("writing the sandbox's trust files: %w", err)
		}
	}
	if logs != nil {
		logs(in)
	}
	p.Load(in)
	return nil
}

// injectWait bounds inject's wait for the proxy to listen.
var injectWait = 10 * time.Second

// Inject sends the secrets on stdin to the egress proxy's control socket
// and reports its answer.
func Inject(control string, stdin io.Reader, stdout io.Writer) error {
	// The proxy may be starting still: it listens within moments.
	var conn net.Conn
	var err error
	for deadline := time.Now().Add(injectWait); ; time.Sleep(20 * time.Millisecond) {
		if conn, err = net.DialTimeout("unix", control, time.Second); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("the egress proxy does not take secrets: %w", err)
	}
	defer conn.Close()
	if _, err := io.Copy(conn, io.LimitReader(stdin, MaxSecrets+1)); err != nil {
		return err
	}
	if err := conn.(*net.UnixConn).CloseWrite(); err != nil {
		return err
	}
	answer, err := io.ReadAll(io.LimitReader(conn, 4<<10))
	if err != nil {
		return err
	}
	if a := strings.TrimSpace(string(answer)); a != "ok" {
		return fmt.Errorf("the egress proxy refused the secrets: %s", a)
	}
	return nil
}
