package egress

import (
	"strings"
	"testing"
)

func TestAllowlist(t *testing.T) {
	a, err := Parse([]string{"proxy.golang.org", "*.npmjs.org", "github.com:443", "10.0.0.5", "[::1]:8080", "Sum.Golang.Org.", "*.1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"proxy.golang.org", 443, true},
		{"proxy.golang.org", 80, true},
		{"PROXY.golang.org.", 443, true},
		{"evil-proxy.golang.org", 443, false},
		{"proxy.golang.org.evil.test", 443, false},
		{"registry.npmjs.org", 443, true},
		{"a.b.npmjs.org", 443, true},
		{"npmjs.org", 443, false}, // *.x is what is under x, not x
		{"evilnpmjs.org", 443, false},
		{"github.com", 443, true},
		{"github.com", 22, false},
		{"api.github.com", 443, false},
		{"10.0.0.5", 80, true},
		{"10.0.0.6", 80, false},
		{"::1", 8080, true},
		{"[::1]", 8080, true},
		{"::1", 80, false},
		{"sum.golang.org", 443, true},
		{"140.82.112.3", 443, false}, // github.com's address is not github.com
		{"4.1.2.3", 80, false},       // "*.1.2.3" names no address
	} {
		if got := a.Allows(c.host, c.port); got != c.want {
			t.Errorf("Allows(%q, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
}

func TestParseRefusesWhatIsNotAHost(t *testing.T) {
	for _, e := range []string{"", "*", "*.", "http://github.com", "github.com:0", "github.com:99999", "a..b", "-a.com", "*.10.0.0.1", "a b.com", "github.com/path"} {
		if _, err := Parse([]string{e}); err == nil || !strings.Contains(err.Error(), "allow entry") {
			t.Errorf("Parse(%q): %v", e, err)
		}
	}
}
