package tarstream

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type tarEntry struct {
	name, body, link string
	typ              byte
	mode             int64
}

func makeTar(t *testing.T, entries []tarEntry) *bytes.Buffer {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range entries {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: e.mode, Linkname: e.link, Size: int64(len(e.body))}
		if e.typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if e.typ == tar.TypeReg {
			_, _ = tw.Write([]byte(e.body))
		}
	}
	_ = tw.Close()
	return &b
}

func TestExtractTarKeepsModesAndLinks(t *testing.T) {
	dest := filepath.Join(t.TempDir(), "out")
	n, err := ExtractTar(makeTar(t, []tarEntry{
		{name: "top/", typ: tar.TypeDir, mode: 0o755},
		{name: "top/run.sh", typ: tar.TypeReg, mode: 0o755, body: "#!/bin/sh\n"},
		{name: "top/d/", typ: tar.TypeDir, mode: 0o750},
		{name: "top/d/f", typ: tar.TypeReg, mode: 0o644, body: "f"},
		{name: "top/link", typ: tar.TypeSymlink, link: "../../../etc/passwd"},
	}), "top", dest)
	if err != nil || n != 5 {
		t.Fatalf("extract: %d %v", n, err)
	}
	if fi, err := os.Stat(filepath.Join(dest, "run.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "d/f")); string(b) != "f" {
		t.Errorf("d/f: %q", b)
	}
	if l, err := os.Readlink(filepath.Join(dest, "link")); err != nil || l != "../../../etc/passwd" {
		t.Errorf("link: %q %v", l, err)
	}
}

func TestExtractTarRefusesEscapes(t *testing.T) {
	for name, entries := range map[string][]tarEntry{
		"dot-dot":        {{name: "top/../../evil", typ: tar.TypeReg, body: "x"}},
		"absolute":       {{name: "/etc/evil", typ: tar.TypeReg, body: "x"}},
		"other top":      {{name: "other/evil", typ: tar.TypeReg, body: "x"}},
		"prefix trick":   {{name: "topx/evil", typ: tar.TypeReg, body: "x"}},
		"through a link": {{name: "top/", typ: tar.TypeDir, mode: 0o755}, {name: "top/l", typ: tar.TypeSymlink, link: "OUTSIDE"}, {name: "top/l/evil", typ: tar.TypeReg, body: "x"}},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			outside := filepath.Join(root, "outside")
			if err := os.Mkdir(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			for i := range entries {
				entries[i].link = strings.ReplaceAll(entries[i].link, "OUTSIDE", outside)
			}
			dest := filepath.Join(root, "a", "b", "dest")
			if _, err := ExtractTar(makeTar(t, entries), "top", dest); err == nil {
				t.Error("escape accepted")
			}
			var found []string
			_ = filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
				if err == nil && filepath.Base(p) == "evil" {
					found = append(found, p)
				}
				return nil
			})
			if len(found) > 0 {
				t.Errorf("wrote %v", found)
			}
		})
	}
}

// A symlink named as the source is archived as the link, not walked: a
// link to / must not pack the whole file system.
func TestTarPathOfASymlinkIsTheLink(t *testing.T) {
	src := filepath.Join(t.TempDir(), "root")
	if err := os.Symlink("/", src); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := TarPath(&b, src, "root", 1000, 1000); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&b)
	h, err := tr.Next()
	if err != nil || h.Typeflag != tar.TypeSymlink || h.Linkname != "/" || h.Name != "root" {
		t.Fatalf("first entry %+v %v, want the symlink root -> /", h, err)
	}
	if h, err := tr.Next(); err != io.EOF {
		t.Fatalf("a second entry %+v %v", h, err)
	}
}

func TestTarPathRoundTrip(t *testing.T) {
	src := t.TempDir()
	if err := os.MkdirAll(filepath.Join(src, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(src, "d/x"), []byte("x"), 0o644)
	_ = os.WriteFile(filepath.Join(src, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	_ = os.Symlink("d/x", filepath.Join(src, "link"))
	var b bytes.Buffer
	if err := TarPath(&b, src, "named", 1000, 1000); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "copy")
	if _, err := ExtractTar(&b, "named", dest); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(filepath.Join(dest, "run.sh")); fi == nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh mode lost")
	}
	if l, _ := os.Readlink(filepath.Join(dest, "link")); l != "d/x" {
		t.Errorf("link %q", l)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "d/x")); string(b) != "x" {
		t.Errorf("d/x %q", b)
	}
}

func TestExtractTarRefusesASymlinkedDest(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(root, "outside")
	_ = os.Mkdir(outside, 0o700)
	dest := filepath.Join(root, "dest")
	if err := os.Symlink(outside, dest); err != nil {
		t.Fatal(err)
	}
	_, err := ExtractTar(makeTar(t, []tarEntry{{name: "top/", typ: tar.TypeDir, mode: 0o777}, {name: "top/evil", typ: tar.TypeReg, body: "x"}}), "top", dest)
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("err %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "evil")); err == nil {
		t.Error("wrote through the symlinked destination")
	}
	if fi, _ := os.Stat(outside); fi.Mode().Perm() != 0o700 {
		t.Errorf("outside mode changed to %v", fi.Mode().Perm())
	}
}
