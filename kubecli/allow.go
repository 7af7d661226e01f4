package kubecli

import (
	"context"
	"fmt"
	"maps"
	"net"
	"slices"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/egress"
)

// allowed is one allowlist entry as a NetworkPolicy can hold it: the
// addresses its name has now, and its port (0: any).
type allowed struct {
	host  string
	addrs []string
	port  int
}

// resolveAllow turns an allowlist into addresses, resolved here, once, at
// create: a NetworkPolicy names addresses, not names. The pod gets the same
// addresses as host aliases, so it needs no DNS (which would be a way out),
// and a name whose addresses change later is not followed: the allowlist on
// a cluster is what the names were at create. A wildcard names no address
// and is refused.
func resolveAllow(ctx context.Context, entries []string) ([]allowed, error) {
	rules, err := egress.Parse(entries)
	if err != nil {
		return nil, err
	}
	var out []allowed
	for _, r := range rules {
		if r.Wildcard {
			return nil, fmt.Errorf("allow entry %q: a wildcard names no address a NetworkPolicy can hold: %w", r.String(), box.ErrUnsupported)
		}
		if ip := net.ParseIP(r.Host); ip != nil {
			out = append(out, allowed{addrs: []string{ip.String()}, port: r.Port})
			continue
		}
		addrs, err := net.DefaultResolver.LookupHost(ctx, r.Host)
		if err != nil {
			return nil, fmt.Errorf("allow entry %q: %w", r.String(), err)
		}
		slices.Sort(addrs)
		out = append(out, allowed{host: r.Host, addrs: addrs, port: r.Port})
	}
	return out, nil
}

// hostAliases are the pod's /etc/hosts lines for the allowed names.
func hostAliases(allow []allowed) []map[string]any {
	byIP := map[string][]string{}
	for _, a := range allow {
		if a.host == "" {
			continue
		}
		for _, ip := range a.addrs {
			if !slices.Contains(byIP[ip], a.host) {
				byIP[ip] = append(byIP[ip], a.host)
			}
		}
	}
	var out []map[string]any
	for _, ip := range slices.Sorted(maps.Keys(byIP)) {
		out = append(out, map[string]any{"ip": ip, "hostnames": byIP[ip]})
	}
	return out
}

// allowPolicy is network "allow": no ingress, and egress only to the
// allowed addresses on their ports.
func allowPolicy(name string, labels map[string]string, allow []allowed) object {
	p := denyAll(name, labels)
	var egress []map[string]any
	for _, a := range allow {
		var to []map[string]any
		for _, ip := range a.addrs {
			bits := 32
			if net.ParseIP(ip).To4() == nil {
				bits = 128
			}
			to = append(to, map[string]any{"ipBlock": map[string]string{"cidr": fmt.Sprintf("%s/%d", ip, bits)}})
		}
		rule := map[string]any{"to": to}
		if a.port != 0 {
			rule["ports"] = []map[string]any{{"protocol": "TCP", "port": a.port}}
		}
		egress = append(egress, rule)
	}
	spec := p.Spec.(map[string]any)
	spec["egress"] = egress
	return p
}
