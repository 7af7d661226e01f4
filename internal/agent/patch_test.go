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
	got := Action{Kind: "bash", Detail: cmd}.commitMessage(sec, 1)
	if strings.Contains(got, "hunt") || !strings.Contains(got, "***") {
		t.Errorf("message keeps a piece of the value: %q", got[len(got)-200:])
	}
	// A run's message holds the command's first line and the count.
	got = Action{Kind: RunKind, Detail: "claude --token hunter2-long-value\nmore", Counted: true}.commitMessage(sec, 3)
	if got != "run: claude --token *** (3 files)\n\nclaude --token ***\nmore\n" {
		t.Errorf("a run's message: %q", got)
	}
	got = Action{Kind: RunKind, Detail: "claude", Counted: true}.commitMessage(sec, 1)
	if got != "run: claude (1 file)\n" {
		t.Errorf("a run's message: %q", got)
	}
}

// What reaches a terminal keeps newlines, tabs and printable characters;
// OSC 52 (clipboard), a screen clear, C1 controls and DEL are escapes.
