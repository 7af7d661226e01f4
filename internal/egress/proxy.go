package egress

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Proxy is an HTTP proxy that forwards plain HTTP requests and CONNECT
// tunnels (HTTPS, or anything else over TCP) to the hosts its allowlist
// names, and refuses the rest at once with a message a person or an agent
// can read.
type Proxy struct {
	Allow Allowlist
	// Dial connects upstream; nil is a net.Dialer with DialTimeout.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Refused, when set, is told of each refused host and port.
	Refused func(host string, port int)
	// inject, once loaded, gives hosts the secrets they may receive (see
	// Injector): the host sends them after the proxy starts.
	inject atomic.Pointer[Injector]

	once      sync.Once
	transport *http.Transport
}

// DialTimeout bounds a connection attempt upstream.
const DialTimeout = 10 * time.Second

func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, network, addr)
	}
	host, _, _ := net.SplitHostPort(addr)
	d := net.Dialer{Timeout: DialTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		return p.checkAddress(host, address)
	}}
	return d.DialContext(ctx, network, addr)
}

// checkAddress refuses what an allowed name resolves to when it is this
// machine or the cloud's metadata service (loopback, link-local, unspecified,
// multicast), unless that very address is listed: a wildcard or a name an
// attacker controls must not lead there. Private ranges stay reachable (an
// artifact server on the company network).
func (p *Proxy) checkAddress(host, address string) error {
	a, port, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip := net.ParseIP(a)
	if ip == nil || !(ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast()) {
		return nil
	}
	n, _ := strconv.Atoi(port)
	if p.Allow.Allows(ip.String(), n) {
		return nil
	}
	return fmt.Errorf("%s resolves to %s, which is not listed itself", host, ip)
}

// Load has the proxy give hosts the secrets of in from now on.
func (p *Proxy) Load(in *Injector) { p.inject.Store(in) }

// Loaded is the injector the proxy uses, nil before a Load.
func (p *Proxy) Loaded() *Injector { return p.inject.Load() }

func (p *Proxy) init() {
	p.once.Do(func() {
		p.transport = &http.Transport{
			Proxy:                 nil, // never a proxy of the proxy's own environment
			DialContext:           p.dial,
			ForceAttemptHTTP2:     false,
			MaxIdleConns:          16,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 5 * time.Minute,
		}
	})
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.init()
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || r.URL.Scheme != "http" {
		http.Error(w, "litterbox egress proxy: send requests through HTTP_PROXY/HTTPS_PROXY (an absolute http:// URL, or CONNECT for https)", http.StatusBadRequest)
		return
	}
	host, port, ok := hostPort(r.URL.Host, 80)
	if !ok {
		http.Error(w, "litterbox egress proxy: bad host", http.StatusBadRequest)
		return
	}
	if !p.allowed(w, host, port) {
		return
	}
	// A secret goes over TLS to its hosts only: its placeholder is
	// refused here, whatever the host.
	in := p.inject.Load()
	if secret := in.Holds(r.Header); secret != "" {
		in.leaked(w, secret, host)
		return
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port)) // the name that was checked
	// Not the request's context: a client that half-closes after its
	// request (nc, HTTP/1.0 tools) would cancel it. Writing the answer to a
	// client that is really gone fails and ends the request all the same.
	out := r.Clone(context.WithoutCancel(r.Context()))
	out.RequestURI = ""
	out.URL.Host = addr
	out.URL.User = nil
	removeHopHeaders(out.Header)
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, "litterbox egress proxy: "+addr+": "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// tunnel answers a CONNECT: once the upstream connection is made, bytes
// flow both ways unread (TLS stays end to end).
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host, port, ok := hostPort(r.Host, 0)
	if !ok || port == 0 {
		http.Error(w, "litterbox egress proxy: CONNECT needs host:port", http.StatusBadRequest)
		return
	}
	if !p.allowed(w, host, port) {
		return
	}
	if in := p.inject.Load(); in.Terminates(host) {
		if down := hijack(w); down != nil {
			in.serve(down, host, port, p.dial)
		}
		return
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	// As for plain requests: a client that half-closes must not cancel
	// the dial.
	up, err := p.dial(context.WithoutCancel(r.Context()), "tcp", addr)
	if err != nil {
		http.Error(w, "litterbox egress proxy: "+addr+": "+err.Error(), http.StatusBadGateway)
		return
	}
	down := hijack(w)
	if down == nil {
		up.Close()
		return
	}
	Splice(up, down)
}

// hijack answers a CONNECT and takes its connection, with what the
// client sent after it; nil when it cannot.
func hijack(w http.ResponseWriter) net.Conn {
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "litterbox egress proxy: cannot tunnel on this connection", http.StatusInternalServerError)
		return nil
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		return nil
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		down.Close()
		return nil
	}
	// What the client sent after its CONNECT (a TLS hello, pipelined)
	// is already buffered.
	if buf.Reader.Buffered() == 0 {
		return down
	}
	pending, _ := buf.Reader.Peek(buf.Reader.Buffered())
	return &prefixed{Conn: down, r: io.MultiReader(bytes.NewReader(bytes.Clone(pending)), down)}
}

// prefixed is a connection whose first bytes were read already.
type prefixed struct {
	net.Conn
	r io.Reader
}

func (c *prefixed) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite ends the writing half, as Splice passes a side's end on.
func (c *prefixed) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// Splice copies both ways, passing on each side's end of writing, until
// both are done, then closes both.
func Splice(a, b net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	copyHalf := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if c, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		} else {
			dst.Close()
		}
	}
	go copyHalf(a, b)
	go copyHalf(b, a)
	wg.Wait()
	a.Close()
	b.Close()
}

// allowed answers 403 for a host the allowlist does not name.
func (p *Proxy) allowed(w http.ResponseWriter, host string, port int) bool {
	if p.Allow.Allows(host, port) {
		return true
	}
	if p.Refused != nil {
		p.Refused(host, port)
	}
	w.Header().Set("X-Litterbox-Refused", net.JoinHostPort(host, strconv.Itoa(port)))
	http.Error(w, RefusalText(host, port), http.StatusForbidden)
	return false
}

// Refusal is one line the proxy prints for each connection it refuses;
// the host reads them back from the proxy container's log.
type Refusal struct {
	Time    time.Time `json:"time"`
	Refused string    `json:"refused"`
	// Secret names the secret whose placeholder the refused request held
	// (see Injector).
	Secret string `json:"secret,omitempty"`
}

// Injected is the line the proxy prints for each request that received a
// secret: which secret, which host (the value never).
type Injected struct {
	Time     time.Time `json:"time"`
	Injected string    `json:"injected"`
	Host     string    `json:"host"`
}

// CountRefusals counts the refusals in a proxy's log by host:port; lines
// that are not refusals are skipped.
func CountRefusals(log []byte) map[string]int {
	counts := map[string]int{}
	for _, line := range bytes.Split(log, []byte("\n")) {
		var r Refusal
		if json.Unmarshal(line, &r) == nil && r.Refused != "" {
			counts[r.Refused]++
		}
	}
	return counts
}

// CountInjected counts the injections in a proxy's log by
// "SECRET@host"; lines that are not injections are skipped.
func CountInjected(log []byte) map[string]int {
	counts := map[string]int{}
	for _, line := range bytes.Split(log, []byte("\n")) {
		var in Injected
		if json.Unmarshal(line, &in) == nil && in.Injected != "" {
			counts[in.Injected+"@"+in.Host]++
		}
	}
	return counts
}

// RefusalText is what a refused client reads.
func RefusalText(host string, port int) string {
	return fmt.Sprintf("litterbox: %s is not in this sandbox's network allowlist ([network] allow in .litterbox.toml)", net.JoinHostPort(host, strconv.Itoa(port)))
}

// hostPort splits "host[:port]", with def when there is no port, and
// returns the host as it is checked and dialled: lower case, without a
// trailing dot. A host that is neither a DNS name nor an IP address (too
// long, not ASCII) is refused without being logged: the client chose it.
func hostPort(hp string, def int) (string, int, bool) {
	if hp == "" || len(hp) > 300 {
		return "", 0, false
	}
	h, port, err := splitHostPort(hp, def)
	if err != nil {
		return "", 0, false
	}
	host, isIP := canonical(h)
	return host, port, isIP || validName(host)
}

// Hop-by-hop headers are the proxy's, not the end server's (RFC 9110 7.6.1).
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopHeaders(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}
