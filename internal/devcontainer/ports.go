package devcontainer

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/slug"
)

const wantPort = `a port number or "host:port"`

func (p *parser) ports() error {
	fv, _ := p.take("forwardPorts")
	av, _ := p.take("portsAttributes")
	attrs, err := p.object(av, "portsAttributes")
	if err != nil || fv == nil {
		return err
	}
	list, ok := fv.([]any)
	if !ok {
		return p.typeError("forwardPorts", "an array", fv)
	}
	seen := map[int]bool{}
	names := map[string]bool{}
	for i, e := range list {
		n, ok, err := p.port(e, index("forwardPorts", i))
		if err != nil {
			return err
		}
		if !ok || seen[n] {
			continue
		}
		seen[n] = true
		label, err := p.label(attrs, n)
		if err != nil {
			return err
		}
		p.f.Ports = append(p.f.Ports, Port{Name: unique(portName(label, n), names), Target: n})
	}
	return nil
}

// port is one forwardPorts entry; ok is false for a port of another host,
// which only a compose setup has and a sandbox cannot reach.
func (p *parser) port(v any, where string) (n int, ok bool, err error) {
	switch v := v.(type) {
	case json.Number:
		n, err = p.portNumber(v.String(), where, v)
		return n, err == nil, err
	case string:
		host, num, found := strings.Cut(v, ":")
		if !found {
			host, num = "", v
		}
		if !digits(num) {
			return 0, false, p.typeError(where, wantPort, v)
		}
		if n, err = p.portNumber(num, where, v); err != nil {
			return 0, false, err
		}
		if host != "" && host != "localhost" && host != "127.0.0.1" {
			p.ignore("forwardPorts "+strconv.Quote(v), "only ports of this container are published")
			return 0, false, nil
		}
		return n, true, nil
	}
	return 0, false, p.typeError(where, wantPort, v)
}

func (p *parser) portNumber(s, where string, v any) (int, error) {
	n, err := strconv.Atoi(s)
	if errors.Is(err, strconv.ErrRange) || err == nil && (n < 1 || n > 65535) {
		return 0, p.errorf(where, "port %s is out of range (1-65535)", s)
	}
	if err != nil {
		return 0, p.typeError(where, wantPort, v)
	}
	return n, nil
}

func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// label is portsAttributes[n].label, "" when there is none. Attributes
// of ranges and patterns are not looked at: they only steer an editor's
// notifications.
func (p *parser) label(attrs map[string]any, n int) (string, error) {
	key := strconv.Itoa(n)
	where := child("portsAttributes", key)
	a, err := p.object(attrs[key], where)
	if err != nil {
		return "", err
	}
	return p.asString(a["label"], child(where, "label"))
}

// portName is the slug of label, cut to a slug's length, or port-<n>.
func portName(label string, n int) string {
	s := slug.Make(label)
	if len(s) > slug.MaxLen {
		s = strings.TrimRight(s[:slug.MaxLen], "-")
	}
	if s == "" {
		return "port-" + strconv.Itoa(n)
	}
	return s
}

// unique is name, or name-2, name-3... when taken, cut so the suffix fits
// in a slug; it marks the result taken.
func unique(name string, taken map[string]bool) string {
	got := name
	for i := 2; taken[got]; i++ {
		suffix := "-" + strconv.Itoa(i)
		base := name
		if len(base)+len(suffix) > slug.MaxLen {
			base = strings.TrimRight(base[:slug.MaxLen-len(suffix)], "-")
		}
		got = base + suffix
	}
	taken[got] = true
	return got
}
