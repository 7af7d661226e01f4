// Package secrets reads the values of a project's [secrets] on the host,
// when a sandbox needs them, and keeps them out of what Litterbox prints,
// logs and commits.
package secrets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/google/shlex"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/runner"
)

// Mask is what a secret's value becomes in output.
const Mask = "***"

// Resolver reads secret values. A command's value is read once per
// process: a password manager may prompt, and an agent makes hundreds of
// calls; a variable is read every time, which costs nothing.
type Resolver struct {
	Runner runner.Runner
	// LookupEnv replaces os.LookupEnv in tests.
	LookupEnv func(string) (string, bool)

	mu       sync.Mutex
	commands map[string]string
	// seen is every value this process resolved, for redacting what is
	// logged after the call that used it (the audit log).
	seen map[string]string
}

// Resolve reads the values of specs. A secret that cannot be read, or
// whose value is too short to redact, is an error naming it.
func (r *Resolver) Resolve(ctx context.Context, specs map[string]config.SecretSpec) (*Values, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	vals := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		v, err := r.value(ctx, specs[name])
		if err != nil {
			return nil, fmt.Errorf("secret %s: %w", name, err)
		}
		switch {
		case len(v) < config.MinSecret:
			return nil, fmt.Errorf("secret %s: its value is %d bytes; one under %d cannot be told from ordinary text, so Litterbox could neither redact it nor keep it out of commits", name, len(v), config.MinSecret)
		case strings.IndexByte(v, 0) >= 0:
			return nil, fmt.Errorf("secret %s: its value holds a NUL byte, which no environment variable can carry", name)
		}
		vals[name] = v
	}
	r.mu.Lock()
	if r.seen == nil {
		r.seen = map[string]string{}
	}
	maps.Copy(r.seen, vals)
	r.mu.Unlock()
	return newValues(vals), nil
}

func (r *Resolver) value(ctx context.Context, s config.SecretSpec) (string, error) {
	if s.Env != "" {
		lookup := r.LookupEnv
		if lookup == nil {
			lookup = os.LookupEnv
		}
		v, ok := lookup(s.Env)
		if !ok {
			return "", fmt.Errorf("%s is not set in the environment litterbox runs in", s.Env)
		}
		return v, nil
	}
	r.mu.Lock()
	v, ok := r.commands[s.Command]
	r.mu.Unlock()
	if ok {
		return v, nil
	}
	argv, err := shlex.Split(s.Command)
	if err != nil || len(argv) == 0 {
		return "", fmt.Errorf("%q is not a command line", s.Command)
	}
	// Run as an argv, never by a shell, and its output is never logged:
	// the runner logs only the command line.
	res, err := r.Runner.Run(ctx, runner.Cmd{Name: argv[0], Args: argv[1:]})
	if err != nil {
		if ee, ok := runner.AsExit(err); ok {
			return "", fmt.Errorf("`%s` exited with code %d", s.Command, ee.Result.ExitCode)
		}
		return "", fmt.Errorf("`%s` could not run: %v", s.Command, err)
	}
	// As $(...) would: the line end a password manager prints is not part
	// of the value.
	v = strings.TrimRight(string(res.Stdout), "\r\n")
	if v == "" {
		return "", fmt.Errorf("`%s` printed nothing", s.Command)
	}
	r.mu.Lock()
	if r.commands == nil {
		r.commands = map[string]string{}
	}
	r.commands[s.Command] = v
	r.mu.Unlock()
	return v, nil
}

// Seen are the values this process has resolved so far: what output
// logged after a call must not show.
func (r *Resolver) Seen() *Values {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return newValues(maps.Clone(r.seen))
}

// Values are resolved secrets. A nil *Values has none and redacts nothing.
type Values struct {
	env map[string]string
	// vals, longest first so a value holding another is masked whole, and
	// their names.
	vals  [][]byte
	names []string
	max   int
}

func newValues(env map[string]string) *Values {
	if len(env) == 0 {
		return nil
	}
	v := &Values{env: env}
	names := slices.Sorted(maps.Keys(env))
	slices.SortStableFunc(names, func(a, b string) int { return len(env[b]) - len(env[a]) })
	for _, n := range names {
		v.vals = append(v.vals, []byte(env[n]))
		v.names = append(v.names, n)
		v.max = max(v.max, len(env[n]))
	}
	return v
}

// Env is the values by name, for the environment of a command.
func (v *Values) Env() map[string]string {
	if v == nil {
		return nil
	}
	return v.env
}

// InSandbox is v as a sandbox's processes get it: each secret the egress
// proxy gives its hosts as its placeholder (placeholders, by name), and a
// secret specs now say to inject but placeholders lack (the sandbox was
// made before: its proxy has no way to give it) not at all. Masking still
// masks the values.
func (v *Values) InSandbox(specs map[string]config.SecretSpec, placeholders map[string]string) *Values {
	if v == nil {
		return nil
	}
	env := maps.Clone(v.env)
	for name := range env {
		switch p, ok := placeholders[name]; {
		case ok:
			env[name] = p
		case len(specs[name].Inject) > 0:
			delete(env, name)
		}
	}
	out := *v
	out.env = env
	return &out
}

// Any reports whether there is a value to look for: one masked but no
// longer given to the sandbox (InSandbox) counts.
func (v *Values) Any() bool { return v != nil && len(v.vals) > 0 }

// Names are the secrets' names, for messages.
func (v *Values) Names() []string {
	if v == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(v.env))
}

// next finds the first value in b: where, how long, whose.
func (v *Values) next(b []byte) (at, n int, name string) {
	at = -1
	for i, s := range v.vals {
		if j := bytes.Index(b, s); j >= 0 && (at < 0 || j < at) {
			at, n, name = j, len(s), v.names[i]
		}
	}
	return at, n, name
}

// Redact masks every value in s.
func (v *Values) Redact(s string) string {
	if v == nil {
		return s
	}
	for _, val := range v.vals {
		s = strings.ReplaceAll(s, string(val), Mask)
	}
	return s
}

// minPart is the shortest piece of a value RedactPart masks at an edge:
// shorter ones tell little, and would mask ordinary text.
const minPart = 4

// RedactPart masks every value in s, a part cut out of a longer text (some
// lines of a file): also a value's beginning at its end, and a value's end
// at its beginning, such as the first lines of a private key, and all of s
// when it lies inside a value.
func (v *Values) RedactPart(s string) string {
	if v == nil {
		return s
	}
	s = v.Redact(s)
	for _, val := range v.vals {
		if len(s) >= minPart && bytes.Contains(val, []byte(s)) {
			return Mask // all of s lies inside the value
		}
		for n := len(val) - 1; n >= minPart; n-- {
			if strings.HasSuffix(s, string(val[:n])) {
				s = s[:len(s)-n] + Mask
				break
			}
		}
		for n := len(val) - 1; n >= minPart; n-- {
			if strings.HasPrefix(s, string(val[len(val)-n:])) {
				s = Mask + s[n:]
				break
			}
		}
	}
	return s
}

// RedactJSON masks every value in encoded JSON, as JSON writes it in a
// string.
func (v *Values) RedactJSON(b []byte) []byte {
	if v == nil {
		return b
	}
	for _, val := range v.vals {
		enc, _ := json.Marshal(string(val))
		b = bytes.ReplaceAll(b, enc[1:len(enc)-1], []byte(Mask))
	}
	return b
}

// Holds names the secret whose value b contains, "" for none.
func (v *Values) Holds(b []byte) string {
	if v == nil {
		return ""
	}
	_, _, name := v.next(b)
	return name
}

// Scanner is an io.Writer that looks for the values in what passes
// through it in pieces, a value split between two writes included.
type Scanner struct {
	v     *Values
	tail  []byte
	found string
}

// NewScanner returns a Scanner for v's values.
func (v *Values) NewScanner() *Scanner { return &Scanner{v: v} }

func (s *Scanner) Write(p []byte) (int, error) {
	if s.v == nil || s.found != "" {
		return len(p), nil
	}
	buf := append(s.tail, p...)
	if s.found = s.v.Holds(buf); s.found == "" {
		keep := min(len(buf), s.v.max-1)
		s.tail = append(make([]byte, 0, s.v.max), buf[len(buf)-keep:]...)
	}
	return len(p), nil
}

// Found names the secret seen, "" for none.
func (s *Scanner) Found() string { return s.found }

// Writer masks the values in a stream before it reaches w. It holds back
// the last bytes of each write that could begin a value; Close writes them.
type Writer struct {
	v       *Values
	w       io.Writer
	pending []byte
}

// NewWriter returns w itself when there is nothing to mask.
func (v *Values) NewWriter(w io.Writer) io.Writer {
	if v == nil || w == nil {
		return w
	}
	return &Writer{v: v, w: w}
}

func (r *Writer) Write(p []byte) (int, error) {
	r.pending = append(r.pending, p...)
	var out []byte
	for {
		at, n, _ := r.v.next(r.pending)
		if at < 0 {
			break
		}
		out = append(append(out, r.pending[:at]...), Mask...)
		r.pending = r.pending[at+n:]
	}
	// What remains holds no whole value; one that began before the last
	// max-1 bytes would have ended inside them.
	if cut := len(r.pending) - (r.v.max - 1); cut > 0 {
		out = append(out, r.pending[:cut]...)
		r.pending = append([]byte(nil), r.pending[cut:]...)
	}
	if len(out) > 0 {
		if _, err := r.w.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Close writes what was held back. After a stream cut short (output over
// its cap), a tail that begins a value is masked too: the cut may have
// split one.
func (r *Writer) Close(cut bool) error {
	out := r.pending
	r.pending = nil
	if cut {
		out = maskPrefixTail(out, r.v)
	}
	if len(out) == 0 {
		return nil
	}
	_, err := r.w.Write(out)
	return err
}

// minPartial is the shortest tail masked as the start of a value: shorter
// ones are as likely ordinary text.
const minPartial = 4

func maskPrefixTail(b []byte, v *Values) []byte {
	for i := 0; i <= len(b)-minPartial; i++ {
		for _, val := range v.vals {
			if bytes.HasPrefix(val, b[i:]) {
				return append(b[:i:i], Mask...)
			}
		}
	}
	return b
}

// CloseWriter closes w when NewWriter made it a *Writer.
func CloseWriter(w io.Writer, cut bool) error {
	if r, ok := w.(*Writer); ok {
		return r.Close(cut)
	}
	return nil
}
