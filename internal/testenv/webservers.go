package testenv

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// PythonImage is the Debian test image with a toolchain (python3, curl,
// wget), built by scripts/test-images.sh.
const PythonImage = "litterbox-test/python:bookworm"

// serveTLS is an HTTPS file server: the files of /srv/www, with the
// certificate in /srv.
const serveTLS = `import http.server, ssl, functools
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="/srv/www")
handler.log_message = lambda *a: None
srv = http.server.ThreadingHTTPServer(("", 443), handler)
` + tlsServe

// tlsServe ends a server script: TLS with the certificate in /srv, then
// "ready" and serving.
const tlsServe = `ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain("/srv/cert.pem", "/srv/key.pem")
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("ready", flush=True)
srv.serve_forever()
`

// serveHTTP is a plain HTTP file server of /srv/www.
const serveHTTP = `import http.server, functools
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="/srv/www")
handler.log_message = lambda *a: None
srv = http.server.ThreadingHTTPServer(("", 80), handler)
print("ready", flush=True)
srv.serve_forever()
`

// TLSServer starts an HTTPS server for name on port 443 of network, serving
// files (by path under /), with a certificate made for the test. It returns
// the certificate, for clients to trust; the server goes when t ends.
func TLSServer(t testing.TB, network, name string, files map[string][]byte) (certPEM []byte) {
	t.Helper()
	certPEM, keyPEM := selfSigned(t, name)
	serve(t, network, name, serveTLS, map[string][]byte{"cert.pem": certPEM, "key.pem": keyPEM}, files)
	return certPEM
}

// HTTPServer starts an HTTP server for name on port 80 of network, serving
// files (by path under /; a directory's index.html for the directory), as
// a module proxy or a package index does; it goes when t ends.
func HTTPServer(t testing.TB, network, name string, files map[string][]byte) {
	t.Helper()
	serve(t, network, name, serveHTTP, nil, files)
}

// serve runs script in a python container on network under the alias name,
// with extra in /srv and files in /srv/www, until it prints "ready".
func serve(t testing.TB, network, name, script string, extra, files map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	write := func(p string, data []byte) {
		p = filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, data := range extra {
		write(p, data)
	}
	write("serve.py", []byte(script))
	for p, data := range files {
		write("www/"+p, data)
	}
	c := network + "-" + strings.ReplaceAll(name, ".", "-")
	if _, err := Docker("run", "-d", "--name", c, "--network", network, "--network-alias", name,
		"-v", dir+":/srv:ro", PythonImage, "python3", "/srv/serve.py"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Docker("rm", "-f", c) })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if out, _ := Docker("logs", c); strings.Contains(out, "ready") {
			return
		}
		if time.Now().After(deadline) {
			out, _ := Docker("logs", c)
			t.Fatalf("the web server %s did not start: %s", name, out)
		}
	}
}

// selfSigned makes a certificate for name, valid for a day.
func selfSigned(t testing.TB, name string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// serveAPI is a stand-in for an agent's API: each POST answers whether its
// Authorization header was "Bearer " and the key in /srv/key, the body
// it received, and its X-Echo header when it has one (as an API quotes a
// bad header back in an error); it prints the same to its log, with the
// Host header, and whether the key is in another header than
// Authorization (the key itself never).
const serveAPI = `import http.server, ssl, json
key = open("/srv/key").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        ok = self.headers.get("Authorization") == "Bearer " + key
        answer = {"authorized": ok, "body": body}
        if "X-Echo" in self.headers:
            answer["echo"] = self.headers["X-Echo"]
        out = json.dumps(answer)
        elsewhere = any(key in v for k, v in self.headers.items() if k.lower() != "authorization")
        print("request", json.dumps({"host": self.headers.get("Host"), "key_elsewhere": elsewhere}), out, flush=True)
        self.send_response(200 if ok else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out.encode())
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("", 443), H)
` + tlsServe

// APIServer starts a stand-in API for name on port 443 of network that
// takes key, with a certificate made for the test, which it returns; its
// container's name is the second result (its log holds each request).
func APIServer(t testing.TB, network, name, key string) (certPEM []byte, container string) {
	t.Helper()
	certPEM, keyPEM := selfSigned(t, name)
	serve(t, network, name, serveAPI, map[string][]byte{"cert.pem": certPEM, "key.pem": keyPEM, "key": []byte(key)}, nil)
	return certPEM, network + "-" + strings.ReplaceAll(name, ".", "-")
}
