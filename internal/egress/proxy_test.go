package egress

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstreams maps the names the tests use to local servers, as a sandbox's
// proxy resolves names through DNS.
type upstreams map[string]string

func (u upstreams) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if real, ok := u[addr]; ok {
		addr = real
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func startProxy(t *testing.T, allow []string, u upstreams) (*url.URL, *[]string) {
	t.Helper()
	a, err := Parse(allow)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var refused []string
	p := &Proxy{Allow: a, Dial: u.dial, Refused: func(h string, port int) {
		mu.Lock()
		defer mu.Unlock()
		refused = append(refused, net.JoinHostPort(h, strconv.Itoa(port)))
	}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	pu, _ := url.Parse(srv.URL)
	return pu, &refused
}

func hostOf(s *httptest.Server) string {
	return strings.TrimPrefix(strings.TrimPrefix(s.URL, "http://"), "https://")
}

// Plain HTTP and HTTPS through CONNECT reach an allowed name; another
// name, another port and an IP literal are refused at once, with a
// message, and counted.
func TestProxyAllowsOnlyTheList(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Connection") != "" {
			t.Error("a hop-by-hop header reached the server")
		}
		io.WriteString(w, "plain "+r.URL.Path)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure "+r.URL.Path)
	}))
	defer secure.Close()
	u := upstreams{
		"allowed.test:80": hostOf(plain), "allowed.test:443": hostOf(secure),
		"a.example.test:443": hostOf(secure), "denied.test:80": hostOf(plain),
	}
	proxyURL, refused := startProxy(t, []string{"allowed.test", "*.example.test:443"}, u)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxyURL),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the test server's own certificate
	}}
	get := func(raw string) (int, string) {
		t.Helper()
		resp, err := client.Get(raw)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get("http://allowed.test/x"); code != 200 || body != "plain /x" {
		t.Errorf("http allowed: %d %q", code, body)
	}
	if code, body := get("https://allowed.test/y"); code != 200 || body != "secure /y" {
		t.Errorf("https allowed: %d %q", code, body)
	}
	if code, body := get("https://a.example.test/z"); code != 200 || body != "secure /z" {
		t.Errorf("wildcard: %d %q", code, body)
	}
	start := time.Now()
	if code, body := get("http://denied.test/"); code != 403 || !strings.Contains(body, "denied.test:80 is not in this sandbox's network allowlist") {
		t.Errorf("denied: %d %q", code, body)
	}
	if _, msg := get("https://example.test/"); !strings.Contains(msg, "Forbidden") {
		t.Errorf("the wildcard's own domain: %s", msg)
	}
	if _, msg := get("http://a.example.test/"); msg == "" {
		t.Errorf("the wildcard on another port was let through")
	}
	if _, msg := get("https://" + hostOf(secure) + "/"); !strings.Contains(msg, "Forbidden") {
		t.Errorf("an IP literal: %s", msg)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("refusals took %v", took)
	}
	want := []string{"denied.test:80", "example.test:443", "a.example.test:80", hostOf(secure)}
	if strings.Join(*refused, " ") != strings.Join(want, " ") {
		t.Errorf("refused %v, want %v", *refused, want)
	}
}

// A request that is not for a proxy is answered, not forwarded.
func TestProxyAnswersDirectRequests(t *testing.T) {
	proxyURL, _ := startProxy(t, []string{"allowed.test"}, nil)
	resp, err := http.Get(proxyURL.String() + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("direct request: %d", resp.StatusCode)
	}
}

// A client that sends its CONNECT and what goes through the tunnel at
// once, then half-closes (nc, scripts), is served all the same.
func TestProxyTunnelForAHalfClosingClient(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "through") }))
	defer plain.Close()
	proxyURL, _ := startProxy(t, []string{"allowed.test"}, upstreams{"allowed.test:80": hostOf(plain)})
	c, err := net.Dial("tcp", proxyURL.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT allowed.test:80 HTTP/1.1\r\nHost: allowed.test:80\r\n\r\nGET / HTTP/1.0\r\n\r\n")
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	all, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(all), "HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.0 200 OK") || !strings.HasSuffix(string(all), "through") {
		t.Errorf("got %q", all)
	}
}

// An allowed name that resolves to this machine or the metadata service is
// not dialled, unless that address is listed itself; a host name that is
// not one is refused without being logged.
func TestProxyGuardsAddressesAndNames(t *testing.T) {
	a, _ := Parse([]string{"*.evil.test", "127.0.0.1:8080"})
	p := &Proxy{Allow: a}
	for addr, ok := range map[string]bool{"127.0.0.1:80": false, "169.254.169.254:80": false, "[::1]:80": false, "0.0.0.0:80": false, "127.0.0.1:8080": true, "10.1.2.3:80": true, "93.184.216.34:443": true} {
		if err := p.checkAddress("x.evil.test", addr); (err == nil) != ok {
			t.Errorf("checkAddress(%s): %v", addr, err)
		}
	}
	for _, hp := range []string{strings.Repeat("a", 900) + ":443", "ex\u00e4mple.test:443", "a b:80", "x.test:0"} {
		if _, _, ok := hostPort(hp, 0); ok {
			t.Errorf("hostPort(%.30q) accepted", hp)
		}
	}
	if h, port, ok := hostPort("API.Example.TEST.:443", 0); !ok || h != "api.example.test" || port != 443 {
		t.Errorf("hostPort normalizes to %q %d %v", h, port, ok)
	}
}

func TestCountRefusals(t *testing.T) {
	log := []byte(`{"time":"2026-11-24T05:00:00Z","refused":"denied.test:80"}
litterbox-helper: egress: something else
{"time":"2026-11-24T05:00:01Z","refused":"denied.test:80"}
{"time":"2026-11-24T05:00:02Z","refused":"10.0.0.1:443"}
`)
	got := CountRefusals(log)
	if len(got) != 2 || got["denied.test:80"] != 2 || got["10.0.0.1:443"] != 1 {
		t.Errorf("counts %v", got)
	}
	// Injections, and a placeholder refused (counted with the refusals).
	log = append(log, `{"time":"2026-11-24T05:00:03Z","injected":"KEY","host":"api.test"}
{"time":"2026-11-24T05:00:04Z","injected":"KEY","host":"api.test"}
{"time":"2026-11-24T05:00:05Z","refused":"other.test","secret":"KEY"}
`...)
	if got := CountInjected(log); len(got) != 1 || got["KEY@api.test"] != 2 {
		t.Errorf("injections %v", got)
	}
	if got := CountRefusals(log); got["other.test"] != 1 || len(got) != 3 {
		t.Errorf("refusals with a placeholder's %v", got)
	}
}
