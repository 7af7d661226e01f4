package sandbox

import (
	"strings"
	"testing"
)

func TestCommitMessage(t *testing.T) {
	if got := commitMessage("write", "src/main.go"); got != "write: src/main.go\n" {
		t.Errorf("short: %q", got)
	}
	long := "go test ./... -run " + strings.Repeat("X", 80)
	got := commitMessage("bash", long)
	subject, body, _ := strings.Cut(got, "\n\n")
	if len(subject) >= 72 || !strings.HasPrefix(subject, "bash: go test") || !strings.HasSuffix(subject, "...") || strings.TrimSpace(body) != long {
		t.Errorf("long: %q", got)
	}
	multi := commitMessage("bash", "echo a\necho b")
	if !strings.HasPrefix(multi, "bash: echo a ...\n\necho a\necho b") {
		t.Errorf("multi-line: %q", multi)
	}
	// An agent's command must not reach the reviewer's terminal as
	// escape sequences through git log.
	evil := commitMessage("bash", "printf '\x1b]0;owned\x07' \x9b2J \u009b\r\tok \u202egnp.exe é")
	if want := "bash: printf '\\x1b]0;owned\\x07' \\x9b2J \\u009b\\x0d\tok \\u202egnp.exe é\n"; evil != want {
		t.Errorf("escapes: %q, want %q", evil, want)
	}
}

func TestResolveAndHidden(t *testing.T) {
	for in, want := range map[string]string{"a/b": "/src/a/b", "/etc/x": "/etc/x", "a/../b": "/src/b", "../etc": "/etc", ".": "/src"} {
		if got := ResolvePath(in); got != want {
			t.Errorf("ResolvePath(%q) = %q, want %q", in, got, want)
		}
	}
	for _, p := range []string{".env", "a/.git/config", "/src/.hidden", "x/../.env"} {
		if _, err := visiblePath(p); err == nil {
			t.Errorf("%q not refused", p)
		}
	}
	for _, p := range []string{"a.b/c", "/tmp/x", "src/..x"} {
		if _, err := visiblePath(p); err != nil && !strings.Contains(p, "..x") {
			t.Errorf("%q refused: %v", p, err)
		}
	}
}
