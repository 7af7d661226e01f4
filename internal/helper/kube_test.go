//go:build linux

package helper

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

func tarOf(t *testing.T, entries ...*tar.Header) *bytes.Buffer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range entries {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(h.Linkname))
			body := h.Linkname
			h.Linkname = ""
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			_, _ = tw.Write([]byte(body))
			continue
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
	}
	_ = tw.Close()
	return &buf
}

func TestUntar(t *testing.T) {
	dir := t.TempDir()
	mtime := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	// A file that exists as a symlink is replaced, not written through.
	outside := filepath.Join(t.TempDir(), "outside")
	_ = os.WriteFile(outside, []byte("keep"), 0o644)
	_ = os.Symlink(outside, filepath.Join(dir, "was-link"))
	in := tarOf(t,
		&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o700},
		&tar.Header{Typeflag: tar.TypeDir, Name: "a/", Mode: 0o755},
		&tar.Header{Typeflag: tar.TypeReg, Name: "a/x.sh", Mode: 0o755, Linkname: "#!/bin/sh\n", ModTime: mtime},
		&tar.Header{Typeflag: tar.TypeReg, Name: "was-link", Mode: 0o644, Linkname: "new"},
		&tar.Header{Typeflag: tar.TypeSymlink, Name: "a/l", Linkname: "x.sh"},
	)
	if err := untar(dir, in); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "a/x.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 || !fi.ModTime().Equal(mtime) {
		t.Fatalf("a/x.sh: %v %v", fi, err)
	}
	if l, _ := os.Readlink(filepath.Join(dir, "a/l")); l != "x.sh" {
		t.Errorf("link %q", l)
	}
	if data, _ := os.ReadFile(outside); string(data) != "keep" {
		t.Errorf("wrote through a symlink: %q", data)
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() == 0o700 {
		t.Error("the root entry was applied")
	}
	// A directory link of the sandbox's leads nowhere outside dir, and no
	// entry gets setuid.
	outDir := t.TempDir()
	_ = os.Symlink(outDir, filepath.Join(dir, "out"))
	if err := untar(dir, tarOf(t, &tar.Header{Typeflag: tar.TypeReg, Name: "out/x", Mode: 0o644, Linkname: "x"})); err == nil {
		t.Error("an entry under a link to outside dir was written")
	}
	if ents, _ := os.ReadDir(outDir); len(ents) != 0 {
		t.Errorf("written outside dir: %v", ents)
	}
	if err := untar(dir, tarOf(t, &tar.Header{Typeflag: tar.TypeReg, Name: "suid", Mode: 0o4755, Linkname: "x"})); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "suid")); err != nil || fi.Mode()&os.ModeSetuid != 0 || fi.Mode().Perm() != 0o755 {
		t.Errorf("suid: %v %v", fi.Mode(), err)
	}
	for _, bad := range []string{"../x", "a/../../x", "/etc/x"} {
		err := untar(dir, tarOf(t, &tar.Header{Typeflag: tar.TypeReg, Name: bad, Mode: 0o644, Linkname: "x"}))
		if err == nil || !strings.Contains(err.Error(), "plain relative path") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

func TestReadLength(t *testing.T) {
	r := strings.NewReader("12\nrest")
	if n, err := readLength(r); n != 12 || err != nil {
		t.Fatalf("%d %v", n, err)
	}
	if rest, _ := r.ReadByte(); rest != 'r' {
		t.Error("read past the length")
	}
	for _, bad := range []string{"", "x\n", "-1\n", "99999999999\n", "2000000\n"} {
		if _, err := readLength(strings.NewReader(bad)); err == nil {
			t.Errorf("%q taken", bad)
		}
	}
}

func TestWithEnvRefusesBadArguments(t *testing.T) {
	for _, a := range [][]string{{"0", "", "0", "sh"}, {"0", "", "0", "--"}, {"0", "", "0", "NOEQ", "--", "sh"}, {"0", "--", "sh"}} {
		var te *protocol.ToolError
		if err := dispatch(append([]string{"with-env"}, a...), os.Stdin, io.Discard); !errors.As(err, &te) || te.Code != protocol.ExitUsage {
			t.Errorf("%q: %v, want a usage error", a, err)
		}
	}
}
