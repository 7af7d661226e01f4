package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// injectEnv is a proxy with two injected secrets (KEY for api.test, MORE
// for more.test), an
// upstream TLS server answering as api.test, other.test and more.test with
// what it received, and a client that trusts the sandbox's CA.
type injectEnv struct {
	client   *http.Client
	proxy    string         // the proxy's address
	trust    *x509.CertPool // what the sandbox trusts
	issuer   string         // of the last answer's certificate
	received chan *http.Request
	bodies   chan string
	mu       sync.Mutex
	used     []string
	leaked   []string
}

func newInjectEnv(t *testing.T, trustUpstream bool) *injectEnv {
	t.Helper()
	e := &injectEnv{received: make(chan *http.Request, 8), bodies: make(chan string, 8)}
	// The upstream's own CA, which the proxy trusts as it would a public one.
	upCA, err := NewCA("upstream", []string{"api.test", "other.test", "more.test"})
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.received <- r
		e.bodies <- string(body)
		io.WriteString(w, "upstream "+r.TLS.ServerName+": "+r.Header.Get("Authorization"))
	}))
	up.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	up.TLS = &tls.Config{GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) { return upCA.Sign(h.ServerName) }}
	up.StartTLS()
	t.Cleanup(up.Close)
	upstream := up.Listener.Addr().String()

	ca, err := NewCA("w", []string{"api.test", "more.test"})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if trustUpstream {
		roots.AddCert(upCA.Cert)
	}
	p := &Proxy{
		Allow: Allowlist{{Host: "api.test"}, {Host: "other.test"}, {Host: "more.test"}, {Host: "plain.test"}},
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, upstream)
		},
	}
	p.Load(&Injector{
		CA: ca, RootCAs: roots,
		Injections: []Injection{
			{Name: "KEY", Placeholder: "litterbox-secret-KEY-0123456789abcdef", Value: "sk-real-value", Hosts: []string{"api.test"}},
			{Name: "MORE", Placeholder: "litterbox-secret-MORE-fedcba9876543210", Value: "more-real", Hosts: []string{"more.test"}, Header: "x-api-key"},
		},
		Used:   func(s, h string) { e.mu.Lock(); e.used = append(e.used, s+"@"+h); e.mu.Unlock() },
		Leaked: func(s, h string) { e.mu.Lock(); e.leaked = append(e.leaked, s+"@"+h); e.mu.Unlock() },
	})
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	proxyURL, _ := url.Parse(srv.URL)
	// The sandbox trusts its own CA, and the upstream's (standing for the
	// public roots).
	trust := x509.NewCertPool()
	trust.AddCert(ca.Cert)
	trust.AddCert(upCA.Cert)
	e.proxy, e.trust = proxyURL.Host, trust
	e.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), TLSClientConfig: &tls.Config{RootCAs: trust}}}
	t.Cleanup(e.client.CloseIdleConnections)
	return e
}

func (e *injectEnv) post(t *testing.T, u, auth, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Authorization", auth)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.TLS != nil {
		e.issuer = resp.TLS.PeerCertificates[0].Issuer.CommonName
	}
	return resp.StatusCode, string(out)
}

// The host named for a secret receives the value in the headers; the body
// is sent as it was written; the sandbox sees the proxy's certificate.
func TestInjectHeadersOnly(t *testing.T) {
	e := newInjectEnv(t, true)
	code, out := e.post(t, "https://api.test/v1/messages", "Bearer litterbox-secret-KEY-0123456789abcdef", `{"echo":"litterbox-secret-KEY-0123456789abcdef"}`)
	if code != 200 || out != "upstream api.test: Bearer sk-real-value" {
		t.Fatalf("answer %d %q", code, out)
	}
	if e.issuer != "Litterbox egress CA for w" {
		t.Errorf("the sandbox saw a certificate of %q", e.issuer)
	}
	r := <-e.received
	if body := <-e.bodies; body != `{"echo":"litterbox-secret-KEY-0123456789abcdef"}` {
		t.Errorf("the body reached the host as %q", body)
	}
	if r.Host != "api.test" || r.URL.Path != "/v1/messages" {
		t.Errorf("the host received %s %s", r.Host, r.URL.Path)
	}
	// A second request on the same connection is injected too.
	if code, out := e.post(t, "https://api.test/v1/again", "Bearer litterbox-secret-KEY-0123456789abcdef", ""); code != 200 || !strings.HasSuffix(out, "sk-real-value") {
		t.Errorf("second request: %d %q", code, out)
	}
	if strings.Join(e.used, ",") != "KEY@api.test,KEY@api.test" || len(e.leaked) != 0 {
		t.Errorf("used %v, leaked %v", e.used, e.leaked)
	}
}

// A placeholder where its secret may not go is refused and counted: on
// another injection host, and in plain http to any host. Another host's
// TLS stays end to end: the proxy neither reads nor changes it.
func TestInjectRefusesElsewhere(t *testing.T) {
	e := newInjectEnv(t, true)
	code, out := e.post(t, "https://more.test/", "Bearer litterbox-secret-KEY-0123456789abcdef", "")
	if code != 403 || !strings.Contains(out, "placeholder of secret KEY, which more.test may not receive") {
		t.Errorf("KEY's placeholder to more.test: %d %q", code, out)
	}
	code, out = e.post(t, "http://plain.test/", "Bearer litterbox-secret-MORE-fedcba9876543210", "")
	if code != 403 || !strings.Contains(out, "placeholder of secret MORE, which plain.test may not receive") {
		t.Errorf("MORE's placeholder over plain http: %d %q", code, out)
	}
	if strings.Join(e.leaked, ",") != "KEY@more.test,MORE@plain.test" || len(e.used) != 0 {
		t.Errorf("leaked %v, used %v", e.leaked, e.used)
	}
	select {
	case r := <-e.received:
		t.Errorf("a refused request reached the host: %s %v", r.Host, r.Header)
	default:
	}
	// other.test receives no secret: its TLS is the host's own, untouched.
	code, out = e.post(t, "https://other.test/", "Bearer litterbox-secret-KEY-0123456789abcdef", "")
	if code != 200 || out != "upstream other.test: Bearer litterbox-secret-KEY-0123456789abcdef" || e.issuer != "Litterbox egress CA for upstream" {
		t.Errorf("other.test: %d %q (certificate of %s)", code, out, e.issuer)
	}
}

// The proxy verifies the host as any client would: a host whose
// certificate it does not trust receives nothing.
func TestInjectVerifiesTheHost(t *testing.T) {
	e := newInjectEnv(t, false)
	code, out := e.post(t, "https://api.test/", "Bearer litterbox-secret-KEY-0123456789abcdef", "")
	if code != 502 || !strings.Contains(out, "certificate signed by unknown authority") {
		t.Errorf("an untrusted host: %d %q", code, out)
	}
	select {
	case r := <-e.received:
		t.Errorf("an untrusted host received %v", r.Header)
	default:
	}
}

// The sandbox's CA vouches for its hosts only: a certificate it signs for
// any other name fails every client's check.
func TestCAIsConstrained(t *testing.T) {
	ca, err := NewCA("w", []string{"api.test"})
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	for host, ok := range map[string]bool{"api.test": true, "evil.test": false, "api.test.evil.test": false} {
		leaf, err := ca.Sign(host)
		if err != nil {
			t.Fatal(err)
		}
		cert, _ := x509.ParseCertificate(leaf.Certificate[0])
		_, err = cert.Verify(x509.VerifyOptions{Roots: roots, DNSName: host})
		if (err == nil) != ok {
			t.Errorf("%s: verify %v, want ok %v", host, err, ok)
		}
	}
	// The CA travels to the proxy as PEM, and back.
	key, err := ca.KeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseCA(ca.CertPEM(), key)
	if err != nil || !back.Cert.Equal(ca.Cert) || !back.Key.Equal(ca.Key) {
		t.Errorf("ParseCA: %v", err)
	}
}

// A request on api.test's connection that names another server, in its
// Host header or as an absolute target, is refused in one line before
// any secret is put in it: a front end shared by many sites routes on
// Host, so the key checked for api.test would reach evil.test.
func TestInjectRefusesAnotherServer(t *testing.T) {
	e := newInjectEnv(t, true)
	req, _ := http.NewRequest(http.MethodPost, "https://api.test/v1", nil)
	req.Host = "evil.test"
	req.Header.Set("Authorization", "Bearer litterbox-secret-KEY-0123456789abcdef")
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest || string(out) != "litterbox: refused: the request's Host header names \"evil.test\", but its connection was opened to api.test:443\n" {
		t.Errorf("Host: evil.test on api.test: %d %q", resp.StatusCode, out)
	}
	for _, target := range []string{"https://evil.test/v1", "http://api.test/v1", "https://api.test:8443/v1"} {
		code, out := e.raw(t, "api.test", "POST "+target+" HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer litterbox-secret-KEY-0123456789abcdef\r\nContent-Length: 0\r\n\r\n")
		if code != http.StatusMisdirectedRequest || !strings.HasPrefix(out, "litterbox: refused: the request's target") || strings.Count(out, "\n") != 1 {
			t.Errorf("target %s on api.test: %d %q", target, code, out)
		}
	}
	// The same names that were checked pass: a port of 443 spelt out, an
	// absolute target of the connection's own host, upper case.
	for _, head := range []string{"POST /v1 HTTP/1.1\r\nHost: API.test:443\r\n", "POST https://api.test/v1 HTTP/1.1\r\nHost: api.test\r\n"} {
		if code, out := e.raw(t, "api.test", head+"Authorization: Bearer litterbox-secret-KEY-0123456789abcdef\r\nContent-Length: 0\r\n\r\n"); code != 200 || out != "upstream api.test: Bearer sk-real-value" {
			t.Errorf("%q: %d %q", head, code, out)
		}
		if r := <-e.received; r.Host != "api.test" {
			t.Errorf("the upstream was told Host %q", r.Host)
		}
		<-e.bodies
	}
	select {
	case r := <-e.received:
		t.Errorf("a misdirected request reached the upstream: Host %s %v", r.Host, r.Header)
	default:
	}
	if strings.Join(e.leaked, ",") != "@api.test,@api.test,@api.test,@api.test" {
		t.Errorf("refusals logged: %v", e.leaked)
	}
}

// A secret's value goes in its one header alone: the placeholder in any
// other header reaches the host as the placeholder, so a host that
// quotes a header back never shows the agent the key.
func TestInjectOnlyItsHeader(t *testing.T) {
	e := newInjectEnv(t, true)
	req, _ := http.NewRequest(http.MethodPost, "https://api.test/v1", nil)
	req.Header.Set("Authorization", "Bearer litterbox-secret-KEY-0123456789abcdef")
	req.Header.Set("X-Echo", "litterbox-secret-KEY-0123456789abcdef")
	req.Header.Set("X-Api-Key", "litterbox-secret-KEY-0123456789abcdef")
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r := <-e.received
	<-e.bodies
	if r.Header.Get("Authorization") != "Bearer sk-real-value" || r.Header.Get("X-Echo") != "litterbox-secret-KEY-0123456789abcdef" || r.Header.Get("X-Api-Key") != "litterbox-secret-KEY-0123456789abcdef" {
		t.Errorf("the host received %v", r.Header)
	}
	// MORE goes in x-api-key: there alone, and never in Authorization.
	req, _ = http.NewRequest(http.MethodPost, "https://more.test/v1", nil)
	req.Header.Set("Authorization", "Bearer litterbox-secret-MORE-fedcba9876543210")
	req.Header.Set("x-api-key", "litterbox-secret-MORE-fedcba9876543210")
	resp, err = e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	r = <-e.received
	<-e.bodies
	if r.Header.Get("X-Api-Key") != "more-real" || r.Header.Get("Authorization") != "Bearer litterbox-secret-MORE-fedcba9876543210" {
		t.Errorf("the host received %v", r.Header)
	}
}

// raw opens a CONNECT tunnel to host:443 through the proxy, speaks TLS as
// a client trusting the sandbox's CA, writes request as it is, and reads
// the answer.
func (e *injectEnv) raw(t *testing.T, host, request string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", e.proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", host, host)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	tc := tls.Client(&prefixed{Conn: conn, r: br}, &tls.Config{ServerName: host, RootCAs: e.trust})
	if _, err := io.WriteString(tc, request); err != nil {
		t.Fatal(err)
	}
	resp, err = http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}
