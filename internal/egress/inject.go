package egress

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A secret that names hosts to receive it never enters the sandbox: the
// sandbox's variable holds a placeholder, and the egress proxy, which
// alone holds the value, puts the value in place of the placeholder in
// the headers of requests to those hosts. To read those headers it ends
// the sandbox's TLS itself, for those hosts only, with certificates of a
// CA made for the sandbox (which the sandbox trusts, and which may sign
// for those hosts only), and talks TLS to the real host, verified as any
// client would. Every other host's TLS stays end to end, unread.

// Injection is one secret that hosts receive in place of its placeholder.
type Injection struct {
	Name        string   `json:"name"`        // the secret's name, for the log
	Placeholder string   `json:"placeholder"` // what the sandbox holds instead
	Value       string   `json:"value"`       // the secret
	Hosts       []string `json:"hosts"`       // who may receive it: host names, lower case
	// Header is the one request header the value goes in, canonical
	// ("Authorization" when empty): a placeholder in any other header
	// stays the placeholder, so an upstream that quotes a header back
	// (an error about a bad value, an echo) never shows the agent the key.
	Header string `json:"header,omitempty"`
}

// header is the canonical name of the header j's value goes in.
func (j Injection) header() string {
	if j.Header == "" {
		return "Authorization"
	}
	return http.CanonicalHeaderKey(j.Header)
}

// Injector ends TLS for the hosts of its injections and puts each secret
// in place of its placeholder in their requests' headers.
type Injector struct {
	CA         *CA
	Injections []Injection
	// RootCAs verify the hosts; nil is the system's roots.
	RootCAs *x509.CertPool
	// Used, when set, is told of each request that received a secret, and
	// Leaked of each request refused: for holding a placeholder its host
	// may not receive (secret names it), or for naming a server other
	// than the one its connection was opened to (secret is empty).
	Used, Leaked func(secret, host string)

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
	once   sync.Once
	client *http.Transport
}

// Terminates reports whether the proxy ends TLS for host: a host that
// receives a secret.
func (in *Injector) Terminates(host string) bool {
	if in == nil {
		return false
	}
	for _, j := range in.Injections {
		if slices.Contains(j.Hosts, host) {
			return true
		}
	}
	return false
}

// Hosts are the hosts of every injection, sorted, without repeats.
func (in *Injector) Hosts() []string {
	var hs []string
	for _, j := range in.Injections {
		hs = append(hs, j.Hosts...)
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}

// rewrite puts, in h, each secret that host may receive in place of its
// placeholder; a placeholder host may not receive is refused: it names the
// secret.
func (in *Injector) rewrite(h http.Header, host string) (refused string) {
	for _, j := range in.Injections {
		if !headerHolds(h, j.Placeholder) {
			continue
		}
		if !slices.Contains(j.Hosts, host) {
			return j.Name
		}
		vs := h[j.header()]
		if !slices.ContainsFunc(vs, func(v string) bool { return strings.Contains(v, j.Placeholder) }) {
			continue
		}
		for i, v := range vs {
			vs[i] = strings.ReplaceAll(v, j.Placeholder, j.Value)
		}
		if in.Used != nil {
			in.Used(j.Name, host)
		}
	}
	return ""
}

// Holds names the first secret whose placeholder is in h, "" when none is.
func (in *Injector) Holds(h http.Header) string {
	if in == nil {
		return ""
	}
	for _, j := range in.Injections {
		if headerHolds(h, j.Placeholder) {
			return j.Name
		}
	}
	return ""
}

func headerHolds(h http.Header, s string) bool {
	for _, vs := range h {
		for _, v := range vs {
			if strings.Contains(v, s) {
				return true
			}
		}
	}
	return false
}

// leaked refuses a plain request holding a secret's placeholder.
func (in *Injector) leaked(w http.ResponseWriter, secret, host string) {
	if in.Leaked != nil {
		in.Leaked(secret, host)
	}
	w.Header().Set("X-Litterbox-Refused", host)
	http.Error(w, leakText(secret, host), http.StatusForbidden)
}

// leakedTLS refuses, on the sandbox's TLS connection, a request holding
// the placeholder of a secret its host may not receive.
func (in *Injector) leakedTLS(conn io.Writer, secret, host string) {
	if in.Leaked != nil {
		in.Leaked(secret, host)
	}
	in.refuseTLS(conn, http.StatusForbidden, leakText(secret, host), host)
}

// misdirected says why req, read on a connection the sandbox opened with
// CONNECT host:port, names another server, "" when it names that one: its
// Host header and an absolute-form target must be host (and port, when
// they give one). A front end shared by many sites routes on the Host
// header, so a request to api.test that says Host: evil.test would carry
// the key checked for api.test to evil.test.
func misdirected(req *http.Request, host string, port int) string {
	want := net.JoinHostPort(host, strconv.Itoa(port))
	check := func(what, hp string) string {
		if h, p, ok := hostPort(hp, 443); !ok || h != host || p != port {
			return fmt.Sprintf("litterbox: refused: the request's %s names %.100q, but its connection was opened to %s", what, hp, want)
		}
		return ""
	}
	if req.URL.Scheme != "" || req.URL.Host != "" {
		if req.URL.Scheme != "https" {
			return fmt.Sprintf("litterbox: refused: the request's target is %.100q, not https on %s", req.URL.String(), want)
		}
		if msg := check("target", req.URL.Host); msg != "" {
			return msg
		}
	}
	return check("Host header", req.Host)
}

// refuseTLS answers, on the sandbox's TLS connection, with code and one
// line saying why, and closes it.
func (in *Injector) refuseTLS(conn io.Writer, code int, msg, host string) {
	msg += "\n"
	fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Litterbox-Refused: %s\r\n\r\n%s", code, http.StatusText(code), len(msg), host, msg)
}

// leakText is what a client sending a placeholder where it may not go
// reads.
func leakText(secret, host string) string {
	return fmt.Sprintf("litterbox: refused: the request holds the placeholder of secret %s, which %s may not receive (and plain http receives none)", secret, host)
}

// serve speaks TLS as host to the sandbox on down, whose CONNECT was to
// host:port, and relays each request to the real host with the secrets it
// may receive, until either side ends.
func (in *Injector) serve(down net.Conn, host string, port int, dial func(ctx context.Context, network, addr string) (net.Conn, error)) {
	defer down.Close()
	conn := tls.Server(down, &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"}, // requests are read one by one
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return in.leaf(host)
		},
	})
	if err := conn.Handshake(); err != nil {
		return // the client did not trust the CA, or gave up
	}
	in.once.Do(func() {
		in.client = &http.Transport{
			Proxy:                 nil,
			DialContext:           dial,
			TLSClientConfig:       &tls.Config{RootCAs: in.RootCAs, MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2:     false,
			MaxIdleConns:          16,
			IdleConnTimeout:       30 * time.Second,
			ResponseHeaderTimeout: 5 * time.Minute,
		}
	})
	r := bufio.NewReader(conn)
	for {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		if msg := misdirected(req, host, port); msg != "" {
			if in.Leaked != nil {
				in.Leaked("", host)
			}
			in.refuseTLS(conn, http.StatusMisdirectedRequest, msg, host)
			return
		}
		if secret := in.rewrite(req.Header, host); secret != "" {
			in.leakedTLS(conn, secret, host)
			return
		}
		if !in.relay(conn, req, host, port) {
			return
		}
	}
}

// relay sends req to addr over TLS and writes the answer to the sandbox;
// false when the connection cannot go on.
func (in *Injector) relay(conn net.Conn, req *http.Request, host string, port int) bool {
	defer req.Body.Close()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	out := req.Clone(context.Background())
	out.RequestURI = ""
	out.URL.Scheme, out.URL.Host = "https", addr
	// The upstream is told the name that was checked, never one the
	// request carried (misdirected refused any other already).
	out.Host = host
	if port != 443 {
		out.Host = addr
	}
	removeHopHeaders(out.Header)
	resp, err := in.client.RoundTrip(out)
	if err != nil {
		msg := "litterbox egress proxy: " + addr + ": " + err.Error() + "\n"
		fmt.Fprintf(conn, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
		return false
	}
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	resp.Close = req.Close
	if err := resp.Write(conn); err != nil {
		return false
	}
	return !req.Close
}

// leaf is host's certificate, signed by the CA, made once.
func (in *Injector) leaf(host string) (*tls.Certificate, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if c := in.leaves[host]; c != nil {
		return c, nil
	}
	c, err := in.CA.Sign(host)
	if err != nil {
		return nil, err
	}
	if in.leaves == nil {
		in.leaves = map[string]*tls.Certificate{}
	}
	in.leaves[host] = c
	return c, nil
}

// CA is a sandbox's own certificate authority: it may sign for its hosts
// only (a name constraint every TLS client checks), so that its key,
// were it ever taken, would vouch for nothing else.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
}

// NewCA makes a CA named for a sandbox that may sign for hosts.
func NewCA(name string, hosts []string) (*CA, error) {
	der, key, err := issue(&x509.Certificate{
		Subject:                     pkix.Name{CommonName: "Litterbox egress CA for " + name, Organization: []string{"Litterbox"}},
		NotAfter:                    time.Now().AddDate(10, 0, 0),
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         hosts,
	}, nil)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

// Sign makes host's certificate.
func (ca *CA) Sign(host string) (*tls.Certificate, error) {
	der, key, err := issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: host},
		DNSNames:    []string{host},
		NotAfter:    ca.Cert.NotAfter,
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca)
	if err != nil {
		return nil, err
	}
	return &tls.Certificate{Certificate: [][]byte{der, ca.Cert.Raw}, PrivateKey: key}, nil
}

// issue makes a key and a certificate of tmpl for it, signed by ca (by
// itself when nil), valid from an hour ago (a clock a little behind).
func issue(tmpl *x509.Certificate, ca *CA) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl.SerialNumber, tmpl.NotBefore = serial(), time.Now().Add(-time.Hour)
	parent, signer := tmpl, key
	if ca != nil {
		parent, signer = ca.Cert, ca.Key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	return der, key, err
}

// CertPEM is the CA's certificate, for the sandbox to trust.
func (ca *CA) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Cert.Raw})
}

// KeyPEM is the CA's key, for the proxy alone.
func (ca *CA) KeyPEM() ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(ca.Key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

// ParseCA reads a CA from its certificate and key in PEM.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("the CA's certificate or key is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}
