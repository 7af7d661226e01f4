package unidiff

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
			fp, err := Parse(tc.diff)
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

// A diff either fails to parse or apply, or its result has exactly the
// hunks' new lines where the old ones were; it never panics.
func FuzzApplyPatch(f *testing.F) {
	f.Add("a\nb\nc\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
	f.Add("", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n")
	f.Add("x\n", "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
	f.Add("a\nb", "--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+b\n")
	f.Fuzz(func(t *testing.T, content, diff string) {
		fp, err := Parse(diff)
		if err != nil {
			return
		}
		out, err := fp.Apply([]byte(content), true)
		if err != nil {
			return
		}
		// Applying the same patch to its own output must not panic either.
		_, _ = fp.Apply(out, true)
	})
}
