package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
)

var updateCLIReference = flag.Bool("update", false, "rewrite docs/cli from the commands' help")

// cliReferenceDir is docs/cli, the CLI reference generated from the commands.
const cliReferenceDir = "../../docs/cli"

const cliReferenceHeader = "<!-- Generated from the commands' help by: go test ./cmd/litterbox -run TestCLIReferenceCurrent -update. Do not edit. -->\n\n"

// The checked-in CLI reference is what the commands generate, so it cannot
// drift from --help: a changed flag or help text fails here until the
// reference is regenerated with -update.
func TestCLIReferenceCurrent(t *testing.T) {
	want := generateCLIReference(t)
	if *updateCLIReference {
		writeCLIReference(t, want)
		return
	}
	got := readCLIReference(t, cliReferenceDir)
	for name, text := range want {
		switch old, ok := got[name]; {
		case !ok:
			t.Errorf("docs/cli/%s is missing", name)
		case old != text:
			t.Errorf("docs/cli/%s differs from what the commands generate", name)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("docs/cli/%s belongs to no command", name)
		}
	}
	if t.Failed() {
		t.Log("regenerate it: go test ./cmd/litterbox -run TestCLIReferenceCurrent -update")
	}
}

// generateCLIReference renders every command's page as cobra/doc does,
// keyed by file name.
func generateCLIReference(t *testing.T) map[string]string {
	t.Helper()
	// Defaults that come from the environment would make the pages vary
	// by machine.
	t.Setenv("LITTERBOX_RUNTIME", "")
	root := rootCommand(cli.NewProgram(strings.NewReader(""), io.Discard, io.Discard))
	var stable func(*cobra.Command)
	stable = func(c *cobra.Command) {
		c.DisableAutoGenTag = true // no generation date
		for _, sub := range c.Commands() {
			stable(sub)
		}
	}
	stable(root)
	dir := t.TempDir()
	header := func(string) string { return cliReferenceHeader }
	link := func(name string) string { return name } // pages link to each other in one directory
	if err := doc.GenMarkdownTreeCustom(root, dir, header, link); err != nil {
		t.Fatal(err)
	}
	return readCLIReference(t, dir)
}

func readCLIReference(t *testing.T, dir string) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pages[filepath.Base(p)] = string(b)
	}
	return pages
}

func writeCLIReference(t *testing.T, pages map[string]string) {
	t.Helper()
	if err := os.MkdirAll(cliReferenceDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name := range readCLIReference(t, cliReferenceDir) {
		if _, ok := pages[name]; !ok {
			if err := os.Remove(filepath.Join(cliReferenceDir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, text := range pages {
		old, err := os.ReadFile(filepath.Join(cliReferenceDir, name))
		if err == nil && bytes.Equal(old, []byte(text)) {
			continue
		}
		if err := os.WriteFile(filepath.Join(cliReferenceDir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
