package snapshot

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// The sandbox's .gitattributes choose no program of the user's: a clean
// filter runs on a path only where the user's own attributes give it that
// driver; any other file is committed as written, and Take names it. An
// odd name (one hash-object cannot read by line) is held to the same rule.
func TestTakeRunsOnlyTheUsersFilters(t *testing.T) {
	marks := t.TempDir()
	s, st := store(t, testenv.Files{".gitattributes": "*.up filter=up\n", "README.md": "hi\n"})
	for _, d := range []string{"up", "mark"} {
		testenv.Git(t, s.Git.Dir, "config", "filter."+d+".clean", "touch "+filepath.Join(marks, d)+"; tr a-z A-Z")
	}
	// The sandbox's attributes: the user's rule, and one of its own that
	// names the user's other driver for everything else.
	attrs := "*.up filter=up\n* filter=mark\n*.up filter=up\n"
	if err := writeUnder(s.Rules, ".gitattributes", []byte(attrs)); err != nil {
		t.Fatal(err)
	}
	f := &fakeHelper{files: map[string]string{
		".gitattributes": attrs, "a.up": "shout\n", "b.txt": "quiet\n", "odd\nname.txt": "odd\n", "odd\nname.up": "odd up\n",
	}}
	for p, body := range f.files {
		f.changes = append(f.changes, changed(p, body))
	}
	taken := take(t, s, st, f)
	for p, want := range map[string]string{"a.up": "SHOUT", "b.txt": "quiet", "odd\nname.txt": "odd", "odd\nname.up": "ODD UP"} {
		if got := testenv.Git(t, s.Git.Dir, "cat-file", "blob", "litterbox/work:"+p); got != want {
			t.Errorf("%q stored as %q, want %q", p, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(marks, "mark")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the filter only the sandbox's attributes name ran on the host (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(marks, "up")); err != nil {
		t.Errorf("the user's own filter did not run: %v", err)
	}
	want := []string{".gitattributes", "b.txt", "odd\nname.txt"}
	if !slices.Equal(taken.Unfiltered, want) {
		t.Errorf("Unfiltered %q, want %q", taken.Unfiltered, want)
	}
}

// Only a mirror whose .gitattributes name a driver other than LFS costs
// the check: LFS alone, or no attributes, cost no git.
func TestMirrorNamesDrivers(t *testing.T) {
	for name, c := range map[string]struct {
		files map[string]string
		want  bool
	}{
		"none":       {nil, false},
		"lfs":        {map[string]string{".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n"}, false},
		"deep":       {map[string]string{"a/b/.gitattributes": "*.bin filter=lfs\n* filter=mark\n"}, true},
		"macro":      {map[string]string{".gitattributes": "[attr]quiet filter=mark\n*.txt quiet\n"}, true},
		"not a rule": {map[string]string{"a/.gitignore": "filter=mark\n"}, false},
	} {
		dir := filepath.Join(t.TempDir(), "rules")
		for p, body := range c.files {
			if err := writeUnder(dir, p, []byte(body)); err != nil {
				t.Fatal(err)
			}
		}
		if got := mirrorNamesDrivers(dir); got != c.want {
			t.Errorf("%s: %v, want %v", name, got, c.want)
		}
	}
}
