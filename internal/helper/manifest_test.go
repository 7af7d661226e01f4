//go:build linux

package helper

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

// A manifest reads back as it was saved, entry for entry, with its
// recheck list; dropped entries are left out. A file cut anywhere, or one
// another program wrote, reads as none, so the next scan is a full one.
func TestManifestRoundTrip(t *testing.T) {
	old := stateDir
	stateDir = t.TempDir()
	t.Cleanup(func() { stateDir = old })
	m := &manifest{}
	for i, p := range []string{"a", "dir/b c", strings.Repeat("x", 4000), "naïve/\n", "sub/gone", "racy"} {
		e := &entry{path: p, mode: 0o100644 + uint32(i), size: int64(i) << 40, mtime: -int64(i), ctime: int64(i) * 1e18, ino: uint64(i) << 50}
		e.id[0], e.id[19] = byte(i), 0xff
		switch p {
		case "sub/gone":
			e.dropped, e.recheck = true, true
		case "racy":
			e.racy = true
		}
		m.list = append(m.list, e)
	}
	if err := m.save(7, 7); err != nil {
		t.Fatal(err)
	}
	got := loadManifest(7)
	if got == nil {
		t.Fatal("the saved manifest did not load")
	}
	var want []entry
	for _, e := range m.list {
		if !e.dropped {
			want = append(want, *e)
		}
	}
	var have []entry
	for _, e := range got.list {
		have = append(have, *e)
	}
	if !reflect.DeepEqual(have, want) {
		t.Errorf("loaded\n%+v\nwant\n%+v", have, want)
	}
	if !reflect.DeepEqual(got.recheck, []string{"sub"}) {
		t.Errorf("recheck %q, want the dropped entry's directory", got.recheck)
	}
	data, err := os.ReadFile(manifestPath(7))
	if err != nil {
		t.Fatal(err)
	}
	for cut := len(manifestMagic) + 1; cut < len(data); cut += 7 {
		if err := os.WriteFile(manifestPath(8), data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		if m := loadManifest(8); m != nil && len(m.list) >= len(want) {
			t.Fatalf("a manifest cut at %d of %d bytes loaded whole", cut, len(data))
		} else if m != nil && !entriesEnd(data, cut) {
			t.Fatalf("a manifest cut inside an entry, at %d of %d bytes, loaded", cut, len(data))
		}
	}
	for _, bad := range [][]byte{nil, []byte("LBXM1\n"), []byte(manifestMagic + "\xff\xff\xff\xff\x0f")} {
		if err := os.WriteFile(manifestPath(9), bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if loadManifest(9) != nil {
			t.Errorf("%q loaded as a manifest", bad)
		}
	}
}

// entriesEnd reports whether cut falls where an entry of the saved
// manifest data ends.
func entriesEnd(data []byte, cut int) bool {
	_, ok := countEntries(data[len(manifestMagic):cut])
	return ok
}

// BenchmarkLoadIndexed38k is the last manifest's load on a 37,889-file
// tree (paths as long as the Go source's), which every call that changes
// something pays, beside its command: the read, the parse and the index.
func BenchmarkLoadIndexed38k(b *testing.B) {
	old := stateDir
	stateDir = b.TempDir()
	b.Cleanup(func() { stateDir = old })
	m := &manifest{}
	for i := range 37889 {
		m.list = append(m.list, &entry{path: fmt.Sprintf("src/cmd/compile/internal/dir%03d/file_%05d.go", i/40, i), mode: 0o100644, size: int64(i)})
	}
	if err := m.save(1, 1); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if loadIndexed(1) == nil {
			b.Fatal("did not load")
		}
	}
}
