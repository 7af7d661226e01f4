package review

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// TestAttrPatternMatchesItsPathAlone asks git itself: each pinned pattern
// gives its attribute to its own path, and to none of the others (a
// namesake in a subdirectory, a path its glob characters would match).
func TestAttrPatternMatchesItsPathAlone(t *testing.T) {
	dir := t.TempDir()
	testenv.NewRepo(t, dir, testenv.Files{"README": "x\n"})
	// Each namesake comes first, so a pattern that matched it too would win.
	paths := []string{"sub/README", "README", "a bc.txt", "a b*.txt", "x.go", "[x].go", `q"uo\te`, "#hash", "!bang", "caf\u00e9", "tab\there", "sub/dir/deep"}
	var lines []string
	for _, p := range paths {
		lines = append(lines, attrPattern(p)+" filter=pin-"+strings.Map(func(r rune) rune {
			if r > ' ' && r < 0x7f && r != '"' && r != '\\' && r != '#' {
				return r
			}
			return '_'
		}, p))
	}
	writeTestFile(t, filepath.Join(dir, ".git", "info", "attributes"), strings.Join(lines, "\n")+"\n")
	g := gitcli.New(dir, testenv.Exec())
	got, err := userAttrs(context.Background(), g, paths)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		want := strings.TrimPrefix(strings.Fields(lines[i][strings.LastIndex(lines[i], "\" ")+1:])[0], "filter=")
		if got[p]["filter"] != want {
			t.Errorf("%q: filter %q, want %q (its pattern %s)", p, got[p]["filter"], want, attrPattern(p))
		}
	}
}

func TestPinsRemoved(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "info", "attributes")
	values := map[string]map[string]string{"a": {"filter": "lfs", "text": "unset", "eol": "unspecified", "ident": "set"}}
	// A file the apply makes goes with its pins.
	if err := writePins(file, []string{"a"}, values); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	if want := pinBegin + pinNewFile + "\n\"/a\" filter=lfs !merge -text !eol !crlf ident !working-tree-encoding\n" + pinEnd + "\n"; string(b) != want {
		t.Errorf("pins:\n%s\nwant:\n%s", b, want)
	}
	if err := removePins(file); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("the file the apply made is still there: %v", err)
	}
	// The user's lines stay, before and after, ending newline or not;
	// an earlier block is replaced, not added to.
	writeTestFile(t, file, "*.x -text")
	for range 2 {
		if err := writePins(file, []string{"a"}, values); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(file); strings.Count(string(b), pinBegin) != 1 || !strings.HasPrefix(string(b), "*.x -text\n"+pinBegin+"\n") {
		t.Errorf("pins over the user's file:\n%s", b)
	}
	if err := removePins(file); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "*.x -text\n" {
		t.Errorf("after: %q, want the user's line", b)
	}
}

func writeTestFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
