package search

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// tree makes files (paths relative to a new temp dir) and returns the dir.
func tree(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func paths(es []protocol.LsEntry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.Path)
	}
	slices.Sort(out)
	return out
}

func TestGlobPatterns(t *testing.T) {
	root := tree(t, "main.go", "main.gox", "src/main.go", "a/b/c.go", "main.c", "docs/a b/c.txt", "docs/a b/cc.txt",
		"a.md", "b.md", "c.md", "a+b.txt", "aab.txt", "web/app.ts", "web/app.tsx", "web/app.js", ".hidden/x.go", "src/.env")
	for pattern, want := range map[string][]string{
		"*.go":               {"main.go"},
		"**/*.go":            {"a/b/c.go", "main.go", "src/main.go"},
		"src/**":             {"src/main.go"},
		"docs/a b/?.txt":     {"docs/a b/c.txt"},
		"[ab].md":            {"a.md", "b.md"},
		"[!ab].md":           {"c.md"},
		"a+b.txt":            {"a+b.txt"},
		"web/*.{ts,tsx}":     {"web/app.ts", "web/app.tsx"},
		"**/*.{c,go}":        {"a/b/c.go", "main.c", "main.go", "src/main.go"},
		"{docs,web}/**/*.js": {"web/app.js"},
	} {
		got, err := Glob(root, pattern, 100)
		if err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		if !slices.Equal(paths(got), want) {
			t.Errorf("%s matched %v, want %v", pattern, paths(got), want)
		}
	}
	if _, err := Glob(root, "[abc", 100); err == nil {
		t.Error("an unclosed class was accepted")
	}
}

// The cut applies to matches: one match among more non-matching files than
// the cut is still found (the cut used to come first).
func TestGlobFindsPastTheCut(t *testing.T) {
	var files []string
	for i := range 60 {
		files = append(files, fmt.Sprintf("gen/f%03d.txt", i))
	}
	root := tree(t, append(files, "zz/wanted.go")...)
	got, err := Glob(root, "**/*.go", 50)
	if err != nil || !slices.Equal(paths(got), []string{"zz/wanted.go"}) {
		t.Fatalf("got %v, %v", paths(got), err)
	}
	got, _ = Glob(root, "gen/*", 50)
	if len(got) != 50 {
		t.Errorf("%d entries, want the cut of 50", len(got))
	}
}

func TestGrepIncludeBraces(t *testing.T) {
	root := tree(t, "a.go", "b.ts", "c.md")
	got, err := Grep(root, "x", "*.{go,ts}", 100)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range got {
		names = append(names, m.Path)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"a.go", "b.ts"}) {
		t.Errorf("include *.{go,ts} matched %v", names)
	}
}
