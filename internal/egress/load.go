package egress

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Secrets is what the host gives a sandbox's egress proxy for its
// injections: the sandbox's CA with its key, the injections with their
// values, and (tests only) roots to trust besides the system's. It
// travels on the stdin of an exec in the proxy's container and lives in
// the proxy's memory only: no argument, variable or file holds it.
type Secrets struct {
	CACert     string      `json:"ca_cert"`
	CAKey      string      `json:"ca_key"`
	Injections []Injection `json:"injections"`
	Roots      string      `json:"roots,omitempty"`
}

// MaxSecrets bounds what the proxy reads of a Secrets message.
const MaxSecrets = 1 << 20

// ReadSecrets reads one Secrets message from r.
func ReadSecrets(r io.Reader) (*Secrets, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSecrets+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxSecrets {
		return nil, fmt.Errorf("the secrets are over %d bytes", MaxSecrets)
	}
	var s Secrets
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("reading the secrets: %w", err)
	}
	return &s, nil
}

// Injector makes the injector the secrets describe, verifying hosts with
// the system's roots and the message's own.
func (s *Secrets) Injector() (*Injector, error) {
	ca, err := ParseCA([]byte(s.CACert), []byte(s.CAKey))
	if err != nil {
		return nil, err
	}
	for _, j := range s.Injections {
		if j.Placeholder == "" || j.Value == "" || len(j.Hosts) == 0 {
			return nil, fmt.Errorf("secret %s: an injection needs a placeholder, a value and hosts", j.Name)
		}
	}
	in := &Injector{CA: ca, Injections: s.Injections}
	if s.Roots != "" {
		roots, err := x509.SystemCertPool()
		if err != nil {
			roots = x509.NewCertPool()
		}
		if !roots.AppendCertsFromPEM([]byte(s.Roots)) {
			return nil, errors.New("the extra roots hold no certificate")
		}
		in.RootCAs = roots
	}
	return in, nil
}

// systemBundles are where images keep their trusted roots: Debian and
// Ubuntu, Fedora and RHEL, Alpine, openSUSE.
var systemBundles = []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem", "/etc/ssl/ca-bundle.pem"}

// Trust files, written by the proxy where the sandbox reads them: the CA
// alone (for NODE_EXTRA_CA_CERTS), and the image's roots with the CA (for
// SSL_CERT_FILE and the like, which replace the roots rather than add).
const (
	CAFile     = "ca.pem"
	BundleFile = "ca-bundle.pem"
)

// WriteTrust writes the trust files into dir: the CA's certificate, and a
// bundle of the first system bundle found (the proxy runs on the
// sandbox's own image, so these are the sandbox's roots) with it.
func WriteTrust(dir string, caPEM []byte) error {
	bundle := []byte{}
	for _, p := range systemBundles {
		if data, err := os.ReadFile(p); err == nil {
			bundle = append(data, '\n')
			break
		}
	}
	bundle = append(bundle, caPEM...)
	for name, data := range map[string][]byte{CAFile: caPEM, BundleFile: bundle} {
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// TrustEnv points every common TLS client of a sandbox, under dir, at the
// trust files: OpenSSL and Go, Python's requests, curl, git, Node.
func TrustEnv(dir string) map[string]string {
	bundle := filepath.Join(dir, BundleFile)
	env := map[string]string{"NODE_EXTRA_CA_CERTS": filepath.Join(dir, CAFile)}
	for _, k := range strings.Fields("SSL_CERT_FILE REQUESTS_CA_BUNDLE CURL_CA_BUNDLE GIT_SSL_CAINFO PIP_CERT") {
		env[k] = bundle
	}
	return env
}
