// Package egress is the network allowlist of a sandbox with network mode
// "allow": which host names and ports it may reach, and the HTTP proxy,
// run by Litterbox's own binary next to the sandbox, that enforces it.
//
// The sandbox sits on a network with no route out; the proxy is its only
// way out, and it connects only to the names the project listed. Names are
// resolved by the proxy, never by the sandbox, so DNS for other names is
// not an escape either.
package egress

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// Rule is one allowlist entry: a host name ("proxy.golang.org"), every
// name under a domain ("*.npmjs.org", which does not match npmjs.org
// itself), or an IP literal, with an optional port (0: any).
type Rule struct {
	Host     string // lower case, without the "*." of a wildcard
	Wildcard bool
	Port     int
}

func (r Rule) String() string {
	h := r.Host
	if r.Wildcard {
		h = "*." + h
	}
	if r.Port != 0 {
		return net.JoinHostPort(h, strconv.Itoa(r.Port))
	}
	return h
}

// Allowlist is the rules of one sandbox.
type Allowlist []Rule

// Parse reads allowlist entries as the config writes them. A bad entry is
// an error naming it.
func Parse(entries []string) (Allowlist, error) {
	out := make(Allowlist, 0, len(entries))
	for _, e := range entries {
		r, err := parseRule(e)
		if err != nil {
			return nil, fmt.Errorf("allow entry %q: %v", e, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRule(e string) (Rule, error) {
	h, port, err := splitHostPort(strings.TrimSpace(e), 0)
	if err != nil {
		return Rule{}, err
	}
	host, isIP := canonical(h)
	r := Rule{Host: host, Port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Wildcard, r.Host = true, rest
		if _, restIP := canonical(rest); restIP {
			return Rule{}, fmt.Errorf("a wildcard of an IP address")
		}
	}
	if !isIP && !validName(r.Host) {
		return Rule{}, fmt.Errorf("want a host name (a.example.com), a wildcard (*.example.com) or an IP address, with an optional :port")
	}
	return r, nil
}

// splitHostPort reads "host[:port]", port def when it has none.
func splitHostPort(s string, def int) (host string, port int, err error) {
	h, p, err := net.SplitHostPort(s)
	if err != nil {
		var addrErr *net.AddrError
		if errors.As(err, &addrErr) && strings.Contains(addrErr.Err, "missing port") {
			return s, def, nil
		}
		return "", 0, err
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 {
		return "", 0, fmt.Errorf("port %q: want 1-65535", p)
	}
	return h, n, nil
}

// canonical is a host as rules and requests are compared: lower case,
// without a trailing dot or brackets, an IP address in its standard form.
func canonical(h string) (host string, isIP bool) {
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), true
	}
	return h, false
}

// validName reports whether h is a DNS name: labels of letters, digits,
// '-' and '_', none empty, at most 253 characters in all.
// HostName reports whether h is a host name as the proxy checks it: a
// valid DNS name, lower case, without a trailing dot, port or wildcard.
func HostName(h string) bool {
	c, isIP := canonical(h)
	return c == h && !isIP && validName(h)
}

func validName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// Allows reports whether a connection to host:port is allowed. host is as
// the client named it: a name matches name rules, an IP literal only a rule
// for that very address.
func (a Allowlist) Allows(host string, port int) bool {
	host, isIP := canonical(host)
	for _, r := range a {
		if r.Port != 0 && r.Port != port {
			continue
		}
		switch {
		case isIP && r.Wildcard:
			continue // "*.1.2.3" does not make 4.1.2.3 a name
		case r.Wildcard && strings.HasSuffix(host, "."+r.Host):
			return true
		case !r.Wildcard && host == r.Host:
			return true
		}
	}
	return false
}
