package egress

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The host gives a running proxy its secrets through `helper inject` on
// the proxy's control socket: the proxy injects them from then on and
// writes the sandbox's trust files; a bad message is refused with its
// reason, and the proxy keeps what it had.
func TestInjectIntoProxy(t *testing.T) {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	control := "@litterbox-test-control-" + hex.EncodeToString(rnd[:])
	l, err := net.Listen("unix", control)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	p := &Proxy{}
	trust := t.TempDir()
	go serveControl(l, p, trust, nil)

	ca, _ := NewCA("w", []string{"api.test"})
	key, _ := ca.KeyPEM()
	msg, _ := json.Marshal(Secrets{CACert: string(ca.CertPEM()), CAKey: string(key),
		Injections: []Injection{{Name: "KEY", Placeholder: "ph-0123456789", Value: "sk-real", Hosts: []string{"api.test"}}}})
	if err := Inject(control, bytes.NewReader(msg), io.Discard); err != nil {
		t.Fatal(err)
	}
	if in := p.Loaded(); in == nil || !in.Terminates("api.test") {
		t.Fatalf("the proxy holds %+v", in)
	}
	if got, _ := os.ReadFile(filepath.Join(trust, CAFile)); !bytes.Equal(got, ca.CertPEM()) {
		t.Errorf("the sandbox's CA file holds %q", got)
	}
	err = Inject(control, strings.NewReader(`{"ca_cert": "x"}`), io.Discard)
	if err == nil || !strings.HasPrefix(err.Error(), "the egress proxy refused the secrets: ") {
		t.Errorf("a bad message: %v", err)
	}
	if in := p.Loaded(); in == nil || !in.Terminates("api.test") {
		t.Errorf("after a bad message the proxy holds %+v", in)
	}
	injectWait = 100 * time.Millisecond
	if err := Inject("@litterbox-test-nobody-"+hex.EncodeToString(rnd[:]), bytes.NewReader(msg), io.Discard); err == nil || !strings.HasPrefix(err.Error(), "the egress proxy does not take secrets: ") {
		t.Errorf("no proxy: %v", err)
	}
}
