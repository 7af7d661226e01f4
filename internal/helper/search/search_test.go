package search

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// perLine is grep's meaning, the reference: each line (split on \n, a
// trailing \r dropped, no line after a final newline) matched on its own.
func perLine(re *regexp.Regexp, data []byte) []protocol.Match {
	out := []protocol.Match{}
	if bytes.IndexByte(data[:min(len(data), binaryPeek)], 0) >= 0 {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		if re.Match(sc.Bytes()) {
			out = append(out, protocol.Match{Path: "f", Line: n, Text: sc.Text()})
		}
	}
	return out
}

var searchSeeds = []struct{ pattern, data string }{
	{"foo", "a foo\nbar\nfoo foo\n"},
	{"foo", "no newline at the end foo"},
	{`^b`, "ab\nba\nb"},
	{`a$`, "ba\r\nab\r\na"},
	{`a\s+b`, "xa\nb\na b\n"},
	{`\Aab`, "ab\nab\n"},
	{`(?-m)^x`, "x\nx\n"},
	{`(?-sm)^foo`, "bar\nfoo\n"},
	{`(?i-sm)^FOO$`, "bar\nfoo\n"},
	{`x*`, "\n\nx\n"},
	{`^$`, "a\n\n\nb\n"},
	{`\bword\b`, "word\nsword\n(word)\n"},
	{"(?i)MiXeD", "mixed\nMIXED\nnone\n"},
	{`a.b`, "a\nb\naxb\n"},
	{"lit", "bin\x00lit\n"},
	{"é", "café\nnot\n"},
	{`\d{3}`, "12\n1234\n"},
	{"^0$", "00\n0\n"}, // a pattern Regexp.LiteralPrefix calls a whole literal
	{"(?i)abc", "ABC\nabd\n"},
}

// The whole-file search finds what line-by-line grep finds, line numbers
// and text alike, for literals, anchors, patterns that could span a
// newline, empty matches, CRLF and binary files.
func TestLineMatcherIsPerLine(t *testing.T) {
	for _, s := range searchSeeds {
		re := regexp.MustCompile(s.pattern)
		got := newLineMatcher(re).search([]byte(s.data), "f", []protocol.Match{}, 1000)
		if want := perLine(re, []byte(s.data)); !reflect.DeepEqual(got, want) {
			t.Errorf("%q in %q: got %v, want %v", s.pattern, s.data, got, want)
		}
	}
	if m := newLineMatcher(regexp.MustCompile("foo")); m.literal == nil {
		t.Error("a literal pattern is not searched as one")
	}
}

func FuzzLineMatcher(f *testing.F) {
	for _, s := range searchSeeds {
		f.Add(s.pattern, s.data)
	}
	f.Fuzz(func(t *testing.T, pattern, data string) {
		re, err := regexp.Compile(pattern)
		if err != nil {
			return
		}
		got := newLineMatcher(re).search([]byte(data), "f", []protocol.Match{}, 1<<30)
		if want := perLine(re, []byte(data)); !reflect.DeepEqual(got, want) {
			t.Errorf("%q in %q: got %v, want %v", pattern, data, got, want)
		}
	})
}

// Results come in walk order (a directory's files around its
// subdirectories', a/b before a-c), and a cut at max keeps the walk's first
// ones, however the workers ran.
func TestGrepTreeKeepsWalkOrder(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		writeTestFile(t, filepath.Join(dir, fmt.Sprintf("f%04d", i)), "x\nhit\n")
	}
	for _, p := range []string{"a/b", "a-c", "a/z/y", "g", "m/n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeTestFile(t, filepath.Join(dir, p), "hit\n")
	}
	// The walk's order, as the old fs.WalkDir went.
	var walked []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, _ error) error {
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			walked = append(walked, rel)
		}
		return nil
	})
	got, err := Grep(dir, "hit", "*", 1000)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, g := range got {
		paths = append(paths, g.Path)
	}
	if !slices.Equal(paths, walked) || len(walked) != 305 {
		t.Fatalf("order:\n%q\nwant\n%q", paths, walked)
	}
	// A cut keeps the walk's first matches, every time.
	for range 5 {
		got, _ := Grep(dir, "hit", "*", 7)
		if len(got) != 7 || got[0].Path != walked[0] || got[6].Path != walked[6] {
			t.Fatalf("max 7: %+v, want the first of %q", got, walked[:7])
		}
	}
	// A subdirectory's files come before the later files of its parent.
	dir = t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "a", "x.go"), "hit\n")
	writeTestFile(t, filepath.Join(dir, "b.go"), strings.Repeat("hit\n", 5))
	if got, _ := Grep(dir, "hit", "*", 3); len(got) != 3 || got[0].Path != "a/x.go" || got[1].Path != "b.go" {
		t.Errorf("max 3: %+v", got)
	}
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A file too large to read at once is searched line by line, from its
// start, with the same line numbers.
func TestGrepLargeFile(t *testing.T) {
	dir := t.TempDir()
	line := strings.Repeat("x", 1023) + "\n"
	body := "hit first\n" + strings.Repeat(line, maxWholeFile/len(line)+10) + "hit last\n"
	writeTestFile(t, filepath.Join(dir, "big.txt"), body)
	got, err := Grep(dir, "^hit", "*", 10)
	if err != nil || len(got) != 2 || got[0].Line != 1 || got[1].Line != maxWholeFile/len(line)+12 || got[1].Text != "hit last" {
		t.Fatalf("%+v %v", got, err)
	}
}
