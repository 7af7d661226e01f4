package egress

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The proxy's secrets travel as one JSON message and become its injector;
// a message that lacks a part is refused, naming the secret.
func TestSecretsMessage(t *testing.T) {
	ca, err := NewCA("w", []string{"api.test"})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ca.KeyPEM()
	up, _ := NewCA("upstream", []string{"api.test"})
	msg := Secrets{CACert: string(ca.CertPEM()), CAKey: string(key), Roots: string(up.CertPEM()),
		Injections: []Injection{{Name: "KEY", Placeholder: "ph-0123456789", Value: "sk-real", Hosts: []string{"api.test"}}}}
	data, _ := json.Marshal(msg)
	got, err := ReadSecrets(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	in, err := got.Injector()
	if err != nil || !in.CA.Cert.Equal(ca.Cert) || !in.Terminates("api.test") || in.Terminates("other.test") || in.RootCAs == nil {
		t.Fatalf("injector %+v %v", in, err)
	}
	got.Injections[0].Value = ""
	if _, err := got.Injector(); err == nil || !strings.Contains(err.Error(), "secret KEY: an injection needs") {
		t.Errorf("an injection without a value: %v", err)
	}
	if _, err := ReadSecrets(bytes.NewReader(make([]byte, MaxSecrets+1))); err == nil {
		t.Error("a message over MaxSecrets was read")
	}
	got.CAKey = "not pem"
	if _, err := got.Injector(); err == nil {
		t.Error("a CA without its key was taken")
	}
}

// The trust files: the CA alone, and the image's roots with the CA last.
func TestWriteTrust(t *testing.T) {
	dir := t.TempDir()
	ca, _ := NewCA("w", []string{"api.test"})
	if err := WriteTrust(dir, ca.CertPEM()); err != nil {
		t.Fatal(err)
	}
	alone, _ := os.ReadFile(filepath.Join(dir, CAFile))
	bundle, _ := os.ReadFile(filepath.Join(dir, BundleFile))
	if !bytes.Equal(alone, ca.CertPEM()) || !bytes.HasSuffix(bundle, ca.CertPEM()) {
		t.Errorf("trust files: %d bytes alone, bundle ends with the CA: %v", len(alone), bytes.HasSuffix(bundle, ca.CertPEM()))
	}
	if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err == nil && len(bundle) < len(alone)+1000 {
		t.Errorf("the bundle (%d bytes) lacks this system's roots", len(bundle))
	}
	env := TrustEnv("/run/litterbox")
	if env["SSL_CERT_FILE"] != "/run/litterbox/ca-bundle.pem" || env["NODE_EXTRA_CA_CERTS"] != "/run/litterbox/ca.pem" || env["REQUESTS_CA_BUNDLE"] != env["SSL_CERT_FILE"] {
		t.Errorf("trust env %v", env)
	}
}
