package config

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The types below check a value where it is decoded, so the parser's error
// carries the line and key of the bad value.

type portNumber int

func (p *portNumber) UnmarshalTOML(v any) error {
	n, ok := v.(int64)
	if !ok {
		return fmt.Errorf("want a port number, got %s", tomlType(v))
	}
	if n < 1 || n > 65535 {
		return fmt.Errorf("port %d is out of range 1-65535", n)
	}
	*p = portNumber(n)
	return nil
}

type memorySize string

var memoryRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([bkmgBKMG]?)$`)

// minMemory is the engine's own floor (docker refuses less than 6 MiB):
// checked here so that create fails before it makes anything.
const minMemory = 6 << 20

func (m *memorySize) UnmarshalTOML(v any) error {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	default:
		return fmt.Errorf("want a size such as \"2g\", got %s", tomlType(v))
	}
	n := memBytes(s)
	if n < 0 {
		return fmt.Errorf("memory %q: want a size such as \"512m\" or \"2g\"", s)
	}
	if n < minMemory {
		return fmt.Errorf("memory %v is %.0f bytes, below the engine's minimum of 6m: want a size such as \"512m\" or \"2g\"", v, n)
	}
	*m = memorySize(s)
	return nil
}

// memBytes is a size as docker reads it ("512m", "2g", bytes), -1 if it
// is not one.
// MemBytes reads a memory size as docker --memory takes it; -1 if it is
// none.
func MemBytes(s string) float64 { return memBytes(s) }

func memBytes(s string) float64 {
	sub := memoryRE.FindStringSubmatch(s)
	if sub == nil {
		return -1
	}
	n, _ := strconv.ParseFloat(sub[1], 64)
	return n * map[string]float64{"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[strings.ToLower(sub[2])]
}

type cpuCount string

func (c *cpuCount) UnmarshalTOML(v any) error {
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case float64:
		f = x
	default:
		return fmt.Errorf("want a number of CPUs such as 2 or 0.5, got %s", tomlType(v))
	}
	if f < 0.01 || f > 1024 {
		return fmt.Errorf("cpus %v: want a number of CPUs from 0.01 up, such as 2 or 0.5", v)
	}
	*c = cpuCount(strconv.FormatFloat(f, 'f', -1, 64))
	return nil
}

// byteSize is a size in bytes, written as a number of bytes or with a
// unit: "50m", "50MiB", "10g", "1.5G".
type byteSize int64

var sizeRE = regexp.MustCompile(`(?i)^([0-9]+(?:\.[0-9]+)?)\s*([kmgt]?)(i?b)?$`)

func (b *byteSize) UnmarshalTOML(v any) error {
	var s string
	switch x := v.(type) {
	case string:
		s = strings.TrimSpace(x)
	case int64:
		s = strconv.FormatInt(x, 10)
	default:
		return fmt.Errorf("want a size such as \"50m\" or \"10g\", got %s", tomlType(v))
	}
	n, ok := ParseSize(s)
	if !ok || n < 1 {
		return fmt.Errorf("size %q: want a size such as \"50m\" or \"10g\"", s)
	}
	*b = byteSize(n)
	return nil
}

// ParseSize reads a size as config files write it.
func ParseSize(s string) (int64, bool) {
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	f, err := strconv.ParseFloat(m[1], 64)
	unit := map[string]float64{"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}[strings.ToLower(m[2])]
	if err != nil || f*unit >= 1<<62 {
		return 0, false
	}
	return int64(f * unit), true
}

// FormatSize writes n the way sizes are written in config files, exactly
// when it can ("50m", "10g"), else in bytes.
func FormatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"t", 1 << 40}, {"g", 1 << 30}, {"m", 1 << 20}, {"k", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

type pidsLimit int

func (p *pidsLimit) UnmarshalTOML(v any) error {
	n, ok := v.(int64)
	if !ok {
		return fmt.Errorf("want a number of processes, got %s", tomlType(v))
	}
	if n < 16 || n > 1<<22 {
		return fmt.Errorf("pids %d: want at least 16 (the sandbox's own tools need a few)", n)
	}
	*p = pidsLimit(n)
	return nil
}

type userID string

var userRE = regexp.MustCompile(`^[0-9]+(:[0-9]+)?$`)

func (u *userID) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("want \"uid:gid\", got %s", tomlType(v))
	}
	if !userRE.MatchString(s) {
		return fmt.Errorf("user %q: want numeric \"uid:gid\" such as \"1000:1000\"", s)
	}
	if !strings.Contains(s, ":") {
		s += ":" + s
	}
	*u = userID(s)
	return nil
}

// command is a service's argv: an array of strings, or one string run by sh.
type command []string

func (c *command) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) == "" {
			return errors.New("the command must not be empty")
		}
		*c = command{"sh", "-c", x}
	case []any:
		if len(x) == 0 {
			return errors.New("the command must not be empty")
		}
		out := make(command, len(x))
		for i, a := range x {
			s, ok := a.(string)
			if !ok {
				return fmt.Errorf("command argument %d: want a string, got %s", i+1, tomlType(a))
			}
			out[i] = s
		}
		*c = out
	default:
		return fmt.Errorf("want an array of strings or a string, got %s", tomlType(v))
	}
	return nil
}

// setupNet is [network] setup: "open", or an allowlist of its own.
type setupNet struct {
	open  bool
	allow []string
}

func (n *setupNet) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		if x != "open" {
			return fmt.Errorf(`%q: use "open" or a list of hosts such as ["registry.npmjs.org"]`, x)
		}
		n.open = true
	case []any:
		n.allow = make([]string, len(x))
		for i, a := range x {
			s, ok := a.(string)
			if !ok {
				return fmt.Errorf("host %d: want a string, got %s", i+1, tomlType(a))
			}
			n.allow[i] = s
		}
	default:
		return fmt.Errorf(`want "open" or an array of hosts, got %s`, tomlType(v))
	}
	return nil
}

// signals a service may be sent, by their names without "SIG".
var signalNames = []string{"HUP", "INT", "QUIT", "KILL", "USR1", "USR2", "TERM", "CONT", "STOP", "WINCH", "ALRM", "PWR"}

type signal string

func (s *signal) UnmarshalTOML(v any) error {
	name, ok := v.(string)
	if !ok {
		return fmt.Errorf("want a signal name such as \"SIGTERM\", got %s", tomlType(v))
	}
	n := strings.TrimPrefix(strings.ToUpper(name), "SIG")
	if !slices.Contains(signalNames, n) {
		return fmt.Errorf("unknown signal %q: want one of SIG%s", name, strings.Join(signalNames, ", SIG"))
	}
	*s = signal(n)
	return nil
}

func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a number"
	case bool:
		return "true or false"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return fmt.Sprintf("%T", v)
}

type sandboxCount int

func (n *sandboxCount) UnmarshalTOML(v any) error {
	x, ok := v.(int64)
	if !ok {
		return fmt.Errorf("want a number of sandboxes such as 8, got %s", tomlType(v))
	}
	if x < 1 || x > 1000 {
		return fmt.Errorf("sandboxes %d: want from 1 to 1000", x)
	}
	*n = sandboxCount(x)
	return nil
}

// poolSize is how many warm sandboxes [pool] keeps ready.
type poolSize int

func (n *poolSize) UnmarshalTOML(v any) error {
	x, ok := v.(int64)
	if !ok {
		return fmt.Errorf("want a number of warm sandboxes such as 2, got %s", tomlType(v))
	}
	if x < 0 || x > MaxPoolSize {
		return fmt.Errorf("size %d: want from 0 to %d", x, MaxPoolSize)
	}
	*n = poolSize(x)
	return nil
}

// memoryBudget is a share of the engine host's memory ("50%") or a size.
type memoryBudget string

func (b *memoryBudget) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf(`want a share of the host's memory such as "50%%" or a size such as "12g", got %s`, tomlType(v))
	}
	if _, _, err := ParseBudget(s); err != nil {
		return err
	}
	*b = memoryBudget(strings.TrimSpace(s))
	return nil
}

// ParseBudget reads a memory budget: a percentage of the host's memory
// (pct > 0) or a size in bytes.
func ParseBudget(s string) (pct float64, size int64, err error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || f <= 0 || f > 1000 {
			return 0, 0, fmt.Errorf("memory budget %q: want a share of the host's memory from 1%% to 1000%% (limits are caps, not use), or a size such as \"12g\"", s)
		}
		return f, 0, nil
	}
	n, ok := ParseSize(s)
	if !ok || n < 4<<20 {
		return 0, 0, fmt.Errorf("memory budget %q: want a share of the host's memory such as \"50%%\", or a size such as \"12g\"", s)
	}
	return 0, n, nil
}

// idleTime is a duration, or "off" (0).
type idleTime time.Duration

func (d *idleTime) UnmarshalTOML(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf(`want a duration such as "30m", or "off", got %s`, tomlType(v))
	}
	if s == "off" || s == "0" {
		*d = 0
		return nil
	}
	x, err := time.ParseDuration(s)
	if err != nil || x < 10*time.Second || x > 30*24*time.Hour {
		return fmt.Errorf(`idle %q: want a duration from "10s" to "720h" such as "30m", or "off"`, s)
	}
	*d = idleTime(x)
	return nil
}
