package sandbox

import (
	"strings"
	"testing"
)

func TestApplyPatch(t *testing.T) {
	for _, tc := range []struct {
		name, in, diff, want string
		exists               bool
		err                  string
	}{
		{name: "modify", exists: true, in: "a\nb\nc\n",
			diff: "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", want: "a\nB\nc\n"},
		{name: "no headers, offset hunk", exists: true, in: "x\ny\na\nb\nc\n",
			diff: "@@ -1,3 +1,4 @@\n a\n b\n+b2\n c\n", want: "x\ny\na\nb\nb2\nc\n"},
		{name: "two hunks", exists: true, in: "1\n2\n3\n4\n5\n6\n7\n8\n9\n",
			diff: "@@ -1,2 +1,2 @@\n-1\n+one\n 2\n@@ -8,2 +8,2 @@\n 8\n-9\n+nine\n", want: "one\n2\n3\n4\n5\n6\n7\n8\nnine\n"},
		{name: "create", exists: false, in: "",
			diff: "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n", want: "hello\nworld\n"},
		{name: "delete", exists: true, in: "bye\n",
			diff: "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n", want: ""},
		{name: "no newline at end", exists: true, in: "a\nb",
			diff: "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n", want: "a\nc\n"},
		{name: "add no newline", exists: true, in: "a\n",
			diff: "@@ -1 +1,2 @@\n a\n+z\n\\ No newline at end of file\n", want: "a\nz"},
		{name: "empty context line", exists: true, in: "a\n\nb\n",
			diff: "@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n", want: "a\n\nc\n"},
		{name: "git headers", exists: true, in: "a\n",
			diff: "diff --git a/f b/f\nindex 111..222 100644\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n", want: "b\n"},
		{name: "context mismatch", exists: true, in: "a\nb\n",
			diff: "@@ -1,2 +1,2 @@\n a\n-x\n+y\n", err: "does not apply"},
		{name: "create over existing", exists: true, in: "a\n",
			diff: "--- /dev/null\n+++ b/f\n@@ -0,0 +1 @@\n+a\n", err: "already exists"},
		{name: "missing file", exists: false,
			diff: "@@ -1 +1 @@\n-a\n+b\n", err: "no such file"},
		{name: "delete leaves lines", exists: true, in: "a\nb\n",
			diff: "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n", err: "lines would remain"},
		{name: "two files", exists: true, in: "a\n",
			diff: "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n--- a/g\n+++ b/g\n@@ -1 +1 @@\n-a\n+b\n", err: "more than one file"},
		{name: "short hunk", exists: true, in: "a\nb\n",
			diff: "@@ -1,3 +1,3 @@\n a\n-b\n+c\n", err: "header says"},
		{name: "empty", exists: true, diff: "  \n", err: "empty"},
		{name: "no hunks", exists: true, diff: "--- a/f\n+++ b/f\n", err: "no hunks"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fp, err := ParseFilePatch(tc.diff)
			var out []byte
			if err == nil {
				out, err = fp.Apply([]byte(tc.in), tc.exists)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("got %q, want %q", out, tc.want)
			}
		})
	}
}

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

func TestStripComments(t *testing.T) {
	got := stripComments("#!/bin/sh\n# comment\n  # indented\n\necho a # trailing stays\n")
	if got != "echo a # trailing stays\n" {
		t.Errorf("got %q", got)
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
