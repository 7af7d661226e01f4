package sandbox

import (
	"archive/tar"
	"bytes"
	"regexp"
	"strings"
	"testing"
)

var slugRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Whatever a name holds, ParseName gives a valid slug or an error, and a slug
// parses to itself.
func FuzzParseName(f *testing.F) {
	for _, s := range []string{"My Feature Name!@#", "", "a", strings.Repeat("x", 64), "$(rm -rf /)", "../..", "a\x00b", "ü-ñ", "--x--"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		slug, err := ParseName(name)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if !slugRE.MatchString(slug) {
			t.Fatalf("ParseName(%q) = %q, not a slug", name, slug)
		}
		if again, err := ParseName(slug); err != nil || again != slug {
			t.Fatalf("slug %q does not parse to itself: %q %v", slug, again, err)
		}
	})
}

// A diff either fails to parse or apply, or its result has exactly the
// hunks' new lines where the old ones were; it never panics.
func FuzzApplyPatch(f *testing.F) {
	f.Add("a\nb\nc\n", "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n")
	f.Add("", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n")
	f.Add("x\n", "--- a/f\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n")
	f.Add("a\nb", "--- a/f\n+++ b/f\n@@ -2 +2 @@\n-b\n\\ No newline at end of file\n+b\n")
	f.Fuzz(func(t *testing.T, content, diff string) {
		fp, err := ParseFilePatch(diff)
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

// Chown rewrites the owner of every entry of any tar it accepts, and keeps
// names and contents.
func FuzzChown(f *testing.F) {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	_ = tw.WriteHeader(&tar.Header{Name: "a.txt", Mode: 0o644, Size: 2, Uid: 0, Gid: 0})
	_, _ = tw.Write([]byte("hi"))
	_ = tw.WriteHeader(&tar.Header{Name: "dir/.gitignore", Mode: 0o644, Size: 4})
	_, _ = tw.Write([]byte("*.o\n"))
	_ = tw.Close()
	f.Add(b.Bytes())
	f.Add([]byte("garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		if err := Chown(&out, bytes.NewReader(data), 1000, 1000, func(string, []byte) error { return nil }); err != nil {
			return
		}
		in, got := tar.NewReader(bytes.NewReader(data)), tar.NewReader(&out)
		for {
			hi, err := in.Next()
			if err != nil {
				return
			}
			ho, err := got.Next()
			if err != nil {
				t.Fatalf("output lost entry %q: %v", hi.Name, err)
			}
			if ho.Name != hi.Name || ho.Uid != 1000 || ho.Gid != 1000 {
				t.Fatalf("entry %q -> %q uid %d gid %d", hi.Name, ho.Name, ho.Uid, ho.Gid)
			}
		}
	})
}
