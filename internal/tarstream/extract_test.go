package tarstream

import (
	"archive/tar"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantedHost is a temp dir with a directory outside DEST that an attack
// tries to reach, holding one file, both with known modes.
type plantedHost struct {
	root, outside, secret, dest string
}

func newPlantedHost(t *testing.T) plantedHost {
	t.Helper()
	root := t.TempDir()
	h := plantedHost{root: root, outside: filepath.Join(root, "outside"), dest: filepath.Join(root, "dest")}
	h.secret = filepath.Join(h.outside, "secret")
	if err := os.Mkdir(h.outside, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.secret, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(h.dest, 0o755); err != nil {
		t.Fatal(err)
	}
	return h
}

// untouched fails the test if anything outside DEST changed.
func (h plantedHost) untouched(t *testing.T) {
	t.Helper()
	if fi, err := os.Stat(h.outside); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("outside dir: mode %v err %v, want 0700", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(h.secret); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("outside file: mode %v err %v, want 0600", fi.Mode().Perm(), err)
	}
	if b, _ := os.ReadFile(h.secret); string(b) != "mine" {
		t.Errorf("outside file now holds %q", b)
	}
	ents, _ := os.ReadDir(h.outside)
	if len(ents) != 1 {
		t.Errorf("outside dir holds %d entries, want 1", len(ents))
	}
}

// The hole of issue 27 item 5: a first download leaves d -> outside, the
// sandbox then makes d a directory of mode 777; the second download must
// neither chmod the link's target nor write anything before refusing.
func TestExtractTarNeverChmodsThroughALinkItMadeEarlier(t *testing.T) {
	h := newPlantedHost(t)
	if _, err := ExtractTar(makeTar(t, []tarEntry{
		{name: "top/", typ: tar.TypeDir, mode: 0o755},
		{name: "top/d", typ: tar.TypeSymlink, link: h.outside},
	}), "top", h.dest); err != nil {
		t.Fatal(err)
	}
	_, err := ExtractTar(makeTar(t, []tarEntry{
		{name: "top/", typ: tar.TypeDir, mode: 0o755},
		{name: "top/early", typ: tar.TypeReg, mode: 0o644, body: "e"},
		{name: "top/d/", typ: tar.TypeDir, mode: 0o777},
		{name: "top/d/secret", typ: tar.TypeReg, mode: 0o777, body: "theirs"},
	}), "top", h.dest)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(h.dest, "d")) || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("err %v, want a refusal naming %s as a symlink", err, filepath.Join(h.dest, "d"))
	}
	h.untouched(t)
	if _, err := os.Lstat(filepath.Join(h.dest, "early")); err == nil {
		t.Error("an entry before the refused one was written: the refusal came after a change")
	}
}

// Every way a planted or archive-made link could be a parent or the target
// of a write or chmod is refused before anything is written.
func TestExtractTarRefusesPlantedLinks(t *testing.T) {
	cases := map[string]struct {
		plant   func(h plantedHost) error
		entries []tarEntry
	}{
		"link as a parent": {
			plant:   func(h plantedHost) error { return os.Symlink(h.outside, filepath.Join(h.dest, "p")) },
			entries: []tarEntry{{name: "top/", typ: tar.TypeDir, mode: 0o755}, {name: "top/p/new", typ: tar.TypeReg, mode: 0o777, body: "x"}},
		},
		"link as a deeper parent": {
			plant: func(h plantedHost) error {
				if err := os.MkdirAll(filepath.Join(h.dest, "a", "b"), 0o755); err != nil {
					return err
				}
				return os.Symlink(h.outside, filepath.Join(h.dest, "a", "b", "c"))
			},
			entries: []tarEntry{{name: "top/a/b/c/d/", typ: tar.TypeDir, mode: 0o777}},
		},
		"link as a directory entry": {
			plant:   func(h plantedHost) error { return os.Symlink(h.outside, filepath.Join(h.dest, "d")) },
			entries: []tarEntry{{name: "top/d/", typ: tar.TypeDir, mode: 0o777}},
		},
		"link made by the same archive, then a dir": {
			entries: []tarEntry{{name: "top/", typ: tar.TypeDir, mode: 0o755}, {name: "top/l", typ: tar.TypeSymlink, link: "OUTSIDE"}, {name: "top/l/", typ: tar.TypeDir, mode: 0o777}},
		},
		"link made by the same archive, then a file under it": {
			entries: []tarEntry{{name: "top/", typ: tar.TypeDir, mode: 0o755}, {name: "top/l", typ: tar.TypeSymlink, link: "OUTSIDE"}, {name: "top/l/secret", typ: tar.TypeReg, mode: 0o777, body: "x"}},
		},
		"file twice, once as a link": {
			entries: []tarEntry{{name: "top/", typ: tar.TypeDir, mode: 0o755}, {name: "top/f", typ: tar.TypeSymlink, link: "OUTSIDE/secret"}, {name: "top/f", typ: tar.TypeReg, mode: 0o777, body: "x"}},
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			h := newPlantedHost(t)
			if c.plant != nil {
				if err := c.plant(h); err != nil {
					t.Fatal(err)
				}
			}
			for i := range c.entries {
				c.entries[i].link = strings.ReplaceAll(c.entries[i].link, "OUTSIDE", h.outside)
			}
			before, _ := os.ReadDir(h.dest)
			_, err := ExtractTar(makeTar(t, c.entries), "top", h.dest)
			if err == nil || !strings.Contains(err.Error(), "nothing written") {
				t.Fatalf("err %v, want a refusal before any change", err)
			}
			h.untouched(t)
			after, _ := os.ReadDir(h.dest)
			if len(after) != len(before) {
				t.Errorf("DEST went from %d to %d entries", len(before), len(after))
			}
			if fi, _ := os.Stat(h.dest); fi.Mode().Perm() != 0o755 {
				t.Errorf("DEST mode changed to %v", fi.Mode().Perm())
			}
		})
	}
}

// A link left in DEST by an earlier download is replaced by a file of the
// same name (the link itself is removed; its target is not written).
func TestExtractTarReplacesALinkLeafWithoutFollowingIt(t *testing.T) {
	h := newPlantedHost(t)
	link := filepath.Join(h.dest, "f")
	if err := os.Symlink(h.secret, link); err != nil {
		t.Fatal(err)
	}
	if _, err := ExtractTar(makeTar(t, []tarEntry{{name: "top/", typ: tar.TypeDir, mode: 0o755}, {name: "top/f", typ: tar.TypeReg, mode: 0o777, body: "new"}}), "top", h.dest); err != nil {
		t.Fatal(err)
	}
	h.untouched(t)
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o777 {
		t.Errorf("f: %v %v, want a regular file of mode 0777", fi, err)
	}
}

// Writing into a user's existing DEST directory, over files already there,
// is what download is for.
func TestExtractTarWritesIntoAnExistingDest(t *testing.T) {
	h := newPlantedHost(t)
	if err := os.WriteFile(filepath.Join(h.dest, "f"), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := ExtractTar(makeTar(t, []tarEntry{{name: "top/", typ: tar.TypeDir, mode: 0o750}, {name: "top/f", typ: tar.TypeReg, mode: 0o600, body: "new"}, {name: "top/sub/g", typ: tar.TypeReg, mode: 0o644, body: "g"}}), "top", h.dest)
	if err != nil || n != 3 {
		t.Fatalf("extract: %d %v", n, err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dest, "f")); string(b) != "new" {
		t.Errorf("f %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dest, "sub", "g")); string(b) != "g" {
		t.Errorf("sub/g %q", b)
	}
	if fi, _ := os.Stat(h.dest); fi.Mode().Perm() != 0o750 {
		t.Errorf("dest mode %v", fi.Mode().Perm())
	}
}
