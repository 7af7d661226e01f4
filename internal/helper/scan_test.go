//go:build linux

package helper

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A scan that re-reads only the directories PID 1 names finds what a full
// walk finds: the re-read directories' entries fresh, the others kept from
// the last manifest, nothing twice and nothing of what went away (a file
// become a directory, a directory gone with its subdirectories, new
// directories walked whole).
func TestWalkDirtyMatchesAFullWalk(t *testing.T) {
	old := root
	root = t.TempDir()
	t.Cleanup(func() { root = old })
	put := func(p string) {
		t.Helper()
		f := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"a/x", "a/b/y", "c/z", "d", "e/f/g", "k/l/m", "k/n"} {
		put(p)
	}
	before, err := walk(root, prune(nil), "")
	if err != nil {
		t.Fatal(err)
	}
	put("a/new.txt")
	if err := os.Remove(filepath.Join(root, "d")); err != nil {
		t.Fatal(err)
	}
	put("d/h")
	if err := os.RemoveAll(filepath.Join(root, "e")); err != nil {
		t.Fatal(err)
	}
	put("c/w/q/r")
	// What PID 1 reports: the directories whose entries changed.
	list, _, err := walkDirty(&manifest{list: before}, []string{"a", "", "c", "e", "e/f"}, prune(nil))
	if err != nil {
		t.Fatal(err)
	}
	full, err := walk(root, prune(nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(list), names(full); !slices.Equal(got, want) {
		t.Errorf("re-reading the changed directories found\n%q\nwant, as a full walk,\n%q", got, want)
	}
}

// names lists the entries' paths and kinds, sorted.
func names(list []*entry) []string {
	var out []string
	for _, e := range list {
		out = append(out, fmt.Sprintf("%s %o", e.path, e.kind()))
	}
	slices.Sort(out)
	return out
}
