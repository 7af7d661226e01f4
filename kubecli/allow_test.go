package kubecli

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
)

func TestAllowBecomesAddressesAndAliases(t *testing.T) {
	allow, err := resolveAllow(context.Background(), []string{"localhost:8443", "10.1.2.3", "[::1]:80"})
	if err != nil {
		t.Fatal(err)
	}
	policy, _ := json.Marshal(allowPolicy("box", map[string]string{"dev.litterbox.managed": "true"}, allow))
	for _, want := range []string{`"cidr":"127.0.0.1/32"`, `"port":8443`, `"cidr":"10.1.2.3/32"`, `"cidr":"::1/128"`, `"port":80`, `"policyTypes":["Ingress","Egress"]`} {
		if !strings.Contains(string(policy), want) {
			t.Errorf("policy lacks %s: %s", want, policy)
		}
	}
	// No ports: any port of 10.1.2.3.
	if strings.Count(string(policy), `"ports"`) != 2 {
		t.Errorf("ports: %s", policy)
	}
	aliases, _ := json.Marshal(hostAliases(allow))
	if !strings.Contains(string(aliases), `"hostnames":["localhost"]`) || strings.Contains(string(aliases), "10.1.2.3") {
		t.Errorf("aliases: %s", aliases)
	}
	if _, err := resolveAllow(context.Background(), []string{"*.example.com"}); !errors.Is(err, box.ErrUnsupported) {
		t.Errorf("wildcard: %v", err)
	}
	if _, err := resolveAllow(context.Background(), []string{"bad host"}); err == nil {
		t.Error("bad entry taken")
	}
}
