package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/secrets"
)

// The kept output: head and tail around the size of what the helper left
// out, and no piece of a secret where the tail begins inside one; a stream
// that came whole is cut here the same way, and one of exactly the limit
// (odd or not) is not cut at all.
func TestKeptOutput(t *testing.T) {
	r := &secrets.Resolver{LookupEnv: func(string) (string, bool) { return "s3cretTOKENvalue", true }}
	sec, err := r.Resolve(context.Background(), map[string]config.SecretSpec{"TOKEN": {Env: "TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	k := newKept(40, sec)
	_, _ = k.Write([]byte("head line\n"))
	k.mark(1000)
	_, _ = k.Write([]byte("KENvalue\nlast\n"))
	got := k.text("stdout", "/tmp/litterbox/out/x.stdout", false)
	if strings.Contains(got, "KENvalue") || !strings.HasPrefix(got, "head line\n[... 1,000 bytes elided; all of stdout is in /tmp/litterbox/out/x.stdout ...]\n") || !strings.HasSuffix(got, "last\n") {
		t.Errorf("%q", got)
	}

	whole := newKept(21, nil)
	_, _ = whole.Write([]byte(strings.Repeat("a", 21)))
	if got := whole.text("stdout", "", false); got != strings.Repeat("a", 21) || whole.cut != 0 {
		t.Errorf("exactly the limit: %q, cut %d", got, whole.cut)
	}
	long := newKept(20, nil)
	_, _ = long.Write([]byte(strings.Repeat("h", 10) + strings.Repeat("m", 100) + strings.Repeat("t", 10)))
	if got := long.text("stderr", "", false); got != strings.Repeat("h", 10)+"\n[... 100 bytes elided ...]\n"+strings.Repeat("t", 10) {
		t.Errorf("cut here: %q", got)
	}
}

// The helper is the agent's to replace: a saved stream's name reaches a
// result only when it is one the helper would give.
func TestSavedPathFromAHostileHelper(t *testing.T) {
	for p, want := range map[string]string{
		"/tmp/litterbox/out/20261127-181502-1f2e3d.stdout": "/tmp/litterbox/out/20261127-181502-1f2e3d.stdout",
		"/tmp/litterbox/out/x\x1b]52;c;aGk=\x07.stdout":    "",
		"/etc/passwd": "",
		"/tmp/litterbox/out/" + strings.Repeat("a", 300): "",
		"": "",
	} {
		if got := savedPath(p); got != want {
			t.Errorf("savedPath(%q) = %q, want %q", p, got, want)
		}
	}
}
