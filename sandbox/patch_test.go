package sandbox

import (
	"strings"
	"testing"
)

func TestGlobRegexp(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"*.go", []string{"main.go"}, []string{"src/main.go", "main.gox"}},
		{"**/*.go", []string{"main.go", "src/main.go", "a/b/c.go"}, []string{"main.c"}},
		{"src/**", []string{"src/a", "src/a/b"}, []string{"other/a"}},
		{"docs/a b/?.txt", []string{"docs/a b/c.txt"}, []string{"docs/a b/cc.txt"}},
		{"[ab].md", []string{"a.md", "b.md"}, []string{"c.md"}},
		{"[!ab].md", []string{"c.md"}, []string{"a.md"}},
		{"a+b.txt", []string{"a+b.txt"}, []string{"aab.txt"}},
	} {
		re, err := GlobRegexp(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tc.match {
			if !re.MatchString(m) {
				t.Errorf("%q should match %q", tc.pattern, m)
			}
		}
		for _, m := range tc.miss {
			if re.MatchString(m) {
				t.Errorf("%q should not match %q", tc.pattern, m)
			}
		}
	}
	if _, err := GlobRegexp("[abc"); err == nil {
		t.Error("unclosed class accepted")
	}
}

func TestReplaceString(t *testing.T) {
	if out, n, err := ReplaceString("a b a", "b", "c", false); err != nil || n != 1 || out != "a c a" {
		t.Errorf("unique: %q %d %v", out, n, err)
	}
	if _, _, err := ReplaceString("a b a", "a", "c", false); err == nil || !strings.Contains(err.Error(), "2 times") {
		t.Errorf("ambiguous: %v", err)
	}
	if out, n, err := ReplaceString("a b a", "a", "c", true); err != nil || n != 2 || out != "c b c" {
		t.Errorf("all: %q %d %v", out, n, err)
	}
	if _, _, err := ReplaceString("a", "z", "c", true); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing: %v", err)
	}
}

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
