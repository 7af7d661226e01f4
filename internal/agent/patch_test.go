package agent

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/secrets"
)

func TestCommitMessage(t *testing.T) {
	if got := hostrepo.CommitMessage("write", "src/main.go"); got != "write: src/main.go\n" {
		t.Errorf("short: %q", got)
	}
	long := "go test ./... -run " + strings.Repeat("X", 80)
	got := hostrepo.CommitMessage("bash", long)
	subject, body, _ := strings.Cut(got, "\n\n")
	if len(subject) >= 72 || !strings.HasPrefix(subject, "bash: go test") || !strings.HasSuffix(subject, "...") || strings.TrimSpace(body) != long {
		t.Errorf("long: %q", got)
	}
	multi := hostrepo.CommitMessage("bash", "echo a\necho b")
	if !strings.HasPrefix(multi, "bash: echo a ...\n\necho a\necho b") {
		t.Errorf("multi-line: %q", multi)
	}
	// An agent's command must not reach the reviewer's terminal as
	// escape sequences through git log.
	evil := hostrepo.CommitMessage("bash", "printf '\x1b]0;owned\x07' \x9b2J \u009b\r\tok \u202egnp.exe é")
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

// A command of a megabyte is recorded as its head, its size and digest:
// the body stays within agenttext.MaxMessage and a note.
func TestCommitMessageIsCapped(t *testing.T) {
	long := "true #" + strings.Repeat("é", 1<<19)
	got := hostrepo.CommitMessage("bash", long)
	if len(got) > agenttext.MaxMessage+300 {
		t.Fatalf("message is %d bytes, want at most %d (subject, head, note)", len(got), agenttext.MaxMessage+300)
	}
	if !strings.Contains(got, "(cut: 1048582 bytes in all, sha256 ") || !utf8.ValidString(got) {
		t.Errorf("no note of the cut, or a character split: %q", got[len(got)-150:])
	}
	if short := hostrepo.CommitMessage("bash", strings.Repeat("x", agenttext.MaxMessage)); strings.Contains(short, "(cut:") {
		t.Errorf("a command of exactly agenttext.MaxMessage bytes was cut")
	}
}

// A secret's value is masked before the cut, so none of it is left at the
// edge; the action's message is built only once the values are known.
func TestActionMessageMasksBeforeTheCut(t *testing.T) {
	r := &secrets.Resolver{LookupEnv: func(string) (string, bool) { return "hunter2-long-value", true }}
	sec, err := r.Resolve(context.Background(), map[string]config.SecretSpec{"TOKEN": {Env: "TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := strings.Repeat("x", agenttext.MaxMessage-5) + "hunter2-long-value and more"
	got := Action{Kind: "bash", Detail: cmd}.commitMessage(sec, []string{"a"})
	if strings.Contains(got, "hunt") || !strings.Contains(got, "***") {
		t.Errorf("message keeps a piece of the value: %q", got[len(got)-200:])
	}
	// A run's subject says what changed; its body holds the command.
	got = Action{Kind: RunKind, Detail: "claude --token hunter2-long-value\nmore", Counted: true}.commitMessage(sec, []string{"app.py", "tests/test_app.py", "README.md"})
	if got != "run: app.py, tests/test_app.py, README.md (3 files)\n\nclaude --token ***\nmore\n" {
		t.Errorf("a run's message: %q", got)
	}
	got = Action{Kind: RunKind, Detail: "claude", Counted: true}.commitMessage(sec, []string{"a.go"})
	if got != "run: a.go (1 file)\n\nclaude\n" {
		t.Errorf("a run's message: %q", got)
	}
}

func TestWhatChanged(t *testing.T) {
	long := "internal/some/deeply/nested/package/with/a/long/name/file.go"
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{"a.go", "b.go", "c.go", "d.go"}, "a.go, b.go, c.go (4 files)"},
		{[]string{long, "b.go"}, agenttext.Elide(long, 56) + " (2 files)"},
		{[]string{"x\x1b[31m.go"}, agenttext.Inert("x\x1b[31m.go") + " (1 file)"},
	} {
		if got := whatChanged(tc.paths); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.paths, got, tc.want)
		}
	}
}

// What reaches a terminal keeps newlines, tabs and printable characters;
// OSC 52 (clipboard), a screen clear, C1 controls and DEL are escapes.
