package secrets

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/runner"
)

type fakeRunner struct {
	out   string
	exit  int
	calls int
}

func (f *fakeRunner) Run(_ context.Context, c runner.Cmd) (runner.Result, error) {
	f.calls++
	res := runner.Result{Stdout: []byte(f.out), ExitCode: f.exit}
	if f.exit != 0 {
		return res, &runner.ExitError{Cmd: c, Result: res}
	}
	return res, nil
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestResolve(t *testing.T) {
	fr := &fakeRunner{out: "gh-token-1234\n"}
	r := &Resolver{Runner: fr, LookupEnv: env(map[string]string{"NPM": "npm-secret-value"})}
	specs := map[string]config.SecretSpec{"NPM_TOKEN": {Env: "NPM"}, "GH_TOKEN": {Command: "secret-tool lookup gh token"}}
	for range 2 {
		v, err := r.Resolve(context.Background(), specs)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Env(); got["NPM_TOKEN"] != "npm-secret-value" || got["GH_TOKEN"] != "gh-token-1234" {
			t.Errorf("env %v", got)
		}
	}
	if fr.calls != 1 {
		t.Errorf("the command ran %d times, want once per process", fr.calls)
	}
	if got := r.Seen().Redact("a gh-token-1234 b"); got != "a *** b" {
		t.Errorf("seen redacts to %q", got)
	}
	for _, c := range []struct {
		spec config.SecretSpec
		r    *fakeRunner
		want string
	}{
		{config.SecretSpec{Env: "UNSET"}, nil, "secret S: UNSET is not set in the environment litterbox runs in"},
		{config.SecretSpec{Env: "SHORT"}, nil, "secret S: its value is 3 bytes; one under 8"},
		{config.SecretSpec{Command: "pass show x"}, &fakeRunner{exit: 1}, "secret S: `pass show x` exited with code 1"},
		{config.SecretSpec{Command: "pass show y"}, &fakeRunner{out: "\n"}, "secret S: `pass show y` printed nothing"},
	} {
		r := &Resolver{Runner: c.r, LookupEnv: env(map[string]string{"SHORT": "abc"})}
		if _, err := r.Resolve(context.Background(), map[string]config.SecretSpec{"S": c.spec}); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%+v: got %v, want %q", c.spec, err, c.want)
		}
	}
}

func values(m map[string]string) *Values { return newValues(m) }

func TestRedactLongestFirst(t *testing.T) {
	v := values(map[string]string{"A": "abcdefgh", "B": "abcdefgh-longer"})
	if got := v.Redact("x abcdefgh-longer y abcdefgh z"); got != "x *** y *** z" {
		t.Errorf("got %q", got)
	}
	var nilValues *Values
	if nilValues.Redact("abc") != "abc" || nilValues.Holds([]byte("abc")) != "" || nilValues.NewWriter(nil) != nil {
		t.Error("nil values must change nothing")
	}
}

// A value split across writes, at every split point, is masked; nothing
// else is held back once the stream is closed.
func TestWriterSplitAnywhere(t *testing.T) {
	v := values(map[string]string{"T": "s3cr3t-value"})
	in := "before s3cr3t-value middle s3cr3t-values3cr3t-value after s3cr3t"
	want := "before *** middle ****** after s3cr3t"
	for i := 0; i <= len(in); i++ {
		for j := i; j <= len(in); j++ {
			var out bytes.Buffer
			w := v.NewWriter(&out)
			for _, part := range []string{in[:i], in[i:j], in[j:]} {
				if _, err := w.Write([]byte(part)); err != nil {
					t.Fatal(err)
				}
			}
			if err := CloseWriter(w, false); err != nil {
				t.Fatal(err)
			}
			if out.String() != want {
				t.Fatalf("split at %d,%d: %q", i, j, out.String())
			}
		}
	}
}

func TestWriterCutMasksABeginning(t *testing.T) {
	v := values(map[string]string{"T": "s3cr3t-value"})
	for in, want := range map[string]string{
		"out: s3cr3t-va": "out: ***",
		"out: s3c":       "out: s3c", // too short to tell
		"out: plain":     "out: plain",
	} {
		var out bytes.Buffer
		w := v.NewWriter(&out)
		_, _ = w.Write([]byte(in))
		_ = CloseWriter(w, true)
		if out.String() != want {
			t.Errorf("%q cut: got %q, want %q", in, out.String(), want)
		}
	}
}

func TestScannerAcrossWrites(t *testing.T) {
	v := values(map[string]string{"NPM_TOKEN": "npm-secret-value", "B": "other-secret"})
	for i := 0; i < 20; i++ {
		s := v.NewScanner()
		data := []byte("token=npm-secret-value\n")
		_, _ = s.Write(data[:i])
		_, _ = s.Write(data[i:])
		if s.Found() != "NPM_TOKEN" {
			t.Fatalf("split at %d: found %q", i, s.Found())
		}
	}
	s := v.NewScanner()
	_, _ = s.Write([]byte("npm-secret-valu"))
	_, _ = s.Write([]byte("E"))
	if s.Found() != "" {
		t.Errorf("found %q in no secret", s.Found())
	}
}

func TestRedactJSON(t *testing.T) {
	v := values(map[string]string{"T": `to<ke>"n-value`})
	line := []byte(`{"command":"echo to\u003cke\u003e\"n-value"}`)
	if got := string(v.RedactJSON(line)); got != `{"command":"echo ***"}` {
		t.Errorf("got %s", got)
	}
}

// Lines cut out of a file that begin or end inside a value (a key over
// several lines) have that piece masked too, and nothing else.
func TestRedactPartMasksTheEdges(t *testing.T) {
	key := "-----BEGIN KEY-----\nAAAABBBBCCCC\nDDDDEEEEFFFF\n-----END KEY-----\n"
	v := values(map[string]string{"KEY": key})
	for _, c := range []struct{ in, want string }{
		{"a = 1\n" + key[:32], "a = 1\n***"},           // the first lines
		{key[32:] + "b = 2\n", "***b = 2\n"},           // the last lines
		{key[20:46], "***"},                            // the middle
		{"a = 1\n" + key + "b\n", "a = 1\n***b\n"},     // whole
		{"plain text\n-----\n", "plain text\n-----\n"}, // too short a piece
	} {
		if got := v.RedactPart(c.in); got != c.want {
			t.Errorf("RedactPart(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A sandbox gets an injected secret's placeholder, never its value, and
// none at all for a secret the config injects now but the sandbox was
// made without; masking still masks every value.
func TestInSandbox(t *testing.T) {
	r := &Resolver{LookupEnv: func(k string) (string, bool) {
		return map[string]string{"A": "value-of-a-1234", "B": "value-of-b-1234", "C": "value-of-c-1234"}[k], true
	}}
	specs := map[string]config.SecretSpec{"A": {Env: "A", Inject: []string{"api.test"}}, "B": {Env: "B"}, "C": {Env: "C", Inject: []string{"api.test"}}}
	v, err := r.Resolve(context.Background(), specs)
	if err != nil {
		t.Fatal(err)
	}
	got := v.InSandbox(specs, map[string]string{"A": "litterbox-placeholder-A"}).Env()
	if len(got) != 2 || got["A"] != "litterbox-placeholder-A" || got["B"] != "value-of-b-1234" {
		t.Errorf("in the sandbox: %v", got)
	}
	if v.Env()["A"] != "value-of-a-1234" {
		t.Errorf("the host's values changed: %v", v.Env())
	}
	if out := v.InSandbox(specs, nil).Redact("value-of-a-1234 value-of-c-1234"); out != Mask+" "+Mask {
		t.Errorf("masking in the sandbox's values: %q", out)
	}
}
