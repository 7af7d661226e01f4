package projectimage

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSuggest(t *testing.T) {
	for _, tc := range []struct {
		files map[string]string
		image string // "" for none
		file  string
	}{
		{map[string]string{"go.mod": "module x\n\ngo 1.26.7\n\ntoolchain go1.26.7\n"}, "golang:1.26", "go.mod"},
		{map[string]string{"go.mod": "module x\ngo 1.22 // old\n"}, "golang:1.22", "go.mod"},
		{map[string]string{"go.mod": "module x\n"}, "golang:1", "go.mod"},
		// A Go service with a package.json for its tooling is a Go project.
		{map[string]string{"package.json": "{}", "go.mod": "go 1.23\n"}, "golang:1.23", "go.mod"},
		{map[string]string{"requirements.txt": "pytest\n"}, "python:3", "requirements.txt"},
		{map[string]string{"pyproject.toml": "[project]\n", "package.json": "{}"}, "python:3", "pyproject.toml"},
		{map[string]string{"package.json": "{}"}, "node:lts", "package.json"},
		{map[string]string{"Cargo.toml": "[package]\n"}, "rust:1", "Cargo.toml"},
		{map[string]string{"pom.xml": "<project/>"}, "maven:3-eclipse-temurin-21", "pom.xml"},
		{map[string]string{"README.md": "hi"}, "", ""},
		// Only the root counts.
		{map[string]string{"tools/go.mod": "go 1.23\n"}, "", ""},
	} {
		root := t.TempDir()
		for name, content := range tc.files {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, ok := Suggest(root)
		if s.Image != tc.image || s.File != tc.file || ok != (tc.image != "") {
			t.Errorf("%v: %+v %v, want %s from %s", tc.files, s, ok, tc.image, tc.file)
		}
	}
}

// A go.mod that is a link out of the repository, or a directory, is no
// project file.
func TestSuggestStaysInTheRoot(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "go.mod"), []byte("go 1.23\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "go.mod"), filepath.Join(root, "go.mod")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "package.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if s, ok := Suggest(root); ok {
		t.Errorf("suggested %+v through a link or a directory", s)
	}
}

func TestSuggestionLine(t *testing.T) {
	s := Suggestion{Kind: "Go", File: "go.mod", Image: "golang:1.26", Tool: "go"}
	if got, want := s.String(), `this is a Go project (go.mod) and busybox has no go: set image = "golang:1.26" under [docker] in .litterbox.toml`; got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
}
