//go:build linux

package helper

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCopyTreeKeepsModesLinksAndTimes(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	must(t, os.MkdirAll(filepath.Join(from, "node_modules", ".bin"), 0o755))
	must(t, os.WriteFile(filepath.Join(from, "node_modules", "x.js"), []byte("x"), 0o644))
	must(t, os.WriteFile(filepath.Join(from, "run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(t, os.Symlink("../x.js", filepath.Join(from, "node_modules", ".bin", "x")))
	must(t, os.Mkdir(filepath.Join(from, "ro"), 0o555))
	must(t, os.Chtimes(filepath.Join(from, "run.sh"), old, old))

	st, err := copyTree(from, to, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 3 || st.Bytes != int64(len("x")+len("#!/bin/sh\n")) {
		t.Errorf("stats %+v", st)
	}
	fi, err := os.Stat(filepath.Join(to, "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o755 || !fi.ModTime().Equal(old) {
		t.Errorf("run.sh: %v %v", fi, err)
	}
	if target, err := os.Readlink(filepath.Join(to, "node_modules", ".bin", "x")); err != nil || target != "../x.js" {
		t.Errorf("symlink %q %v", target, err)
	}
	if fi, err := os.Stat(filepath.Join(to, "ro")); err != nil || fi.Mode().Perm() != 0o555 {
		t.Errorf("ro: %v %v", fi, err)
	}
	if data, err := os.ReadFile(filepath.Join(to, "node_modules", "x.js")); err != nil || string(data) != "x" {
		t.Errorf("x.js %q %v", data, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCopyTreeSkipsListedPaths(t *testing.T) {
	from, to := t.TempDir(), t.TempDir()
	must(t, os.MkdirAll(filepath.Join(from, "src", "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(from, "src", "a.go"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(from, "src", "built.o"), nil, 0o644))
	must(t, os.WriteFile(filepath.Join(from, "src", "sub", "x"), nil, 0o644))
	if _, err := copyTree(from, to, map[string]bool{"src/a.go": true, "src/sub": true}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{"src/a.go": false, "src/built.o": true, "src/sub": false} {
		if _, err := os.Lstat(filepath.Join(to, name)); (err == nil) != want {
			t.Errorf("%s: present %v, want %v", name, err == nil, want)
		}
	}
}
