//go:build linux

package manifest

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// A manifest reads back as it was saved, entry for entry, with its
// recheck list; dropped entries are left out. A file cut anywhere reads as
// none or as whole records of it, and one another program wrote as none,
// so the next scan is a full one.
func TestManifestRoundTrip(t *testing.T) {
	useStateDir(t)
	var list []*entry
	for i, p := range []string{"a", "dir", "dir/b c", strings.Repeat("x", 300), "naïve/\n", "sub", "sub/gone", "sub/kept", "racy"} {
		e := &entry{path: p, mode: 0o100644 + uint32(i), size: int64(i) << 40, mtime: -int64(i), ctime: int64(i) * 1e18, ino: uint64(i) << 50}
		if p == "dir" || p == "sub" {
			e.mode = protocol.ModeDir | 0o755
		}
		e.id[0], e.id[19] = byte(i), 0xff
		e.racy = p == "racy"
		list = append(list, e)
	}
	m := New(list, "")
	m.Drop("sub/gone")
	if err := m.Save(7, 7); err != nil {
		t.Fatal(err)
	}
	got := Load(7)
	if got == nil {
		t.Fatal("the saved Manifest did not load")
	}
	var want []string
	for _, e := range list {
		if !e.dropped {
			want = append(want, fmt.Sprintf("%+v", *e))
		}
	}
	slices.Sort(want)
	have := dump(got)
	if !slices.Equal(have, want) {
		t.Errorf("loaded\n%s\nwant\n%s", strings.Join(have, "\n"), strings.Join(want, "\n"))
	}
	if !reflect.DeepEqual(got.recheck, []string{"sub"}) {
		t.Errorf("recheck %q, want the dropped entry's directory", got.recheck)
	}
	if got.Size() != m.Size() || m.Size() == 0 {
		t.Errorf("size %d loaded, %d saved", got.Size(), m.Size())
	}
	data, err := os.ReadFile(manifestPath(7))
	if err != nil {
		t.Fatal(err)
	}
	for cut := len(manifestMagic) + 1; cut < len(data); cut++ {
		if err := os.WriteFile(manifestPath(8), data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		m := Load(8)
		if m == nil {
			continue
		}
		part := dump(m)
		if len(part) >= len(want) {
			t.Fatalf("a Manifest cut at %d of %d bytes loaded whole", cut, len(data))
		}
		for _, e := range part {
			if !slices.Contains(want, e) {
				t.Fatalf("a Manifest cut at %d of %d bytes loaded %s, never saved", cut, len(data), e)
			}
		}
	}
	for _, bad := range [][]byte{nil, []byte("LBXM2\n"), []byte(manifestMagic + "\xff\xff\xff\xff\x0f"), append(slices.Clone(data), data[len(manifestMagic):]...)} {
		if err := os.WriteFile(manifestPath(9), bad, 0o600); err != nil {
			t.Fatal(err)
		}
		if Load(9) != nil {
			t.Errorf("%.40q loaded as a manifest", bad)
		}
	}
}

// dump lists a manifest's entries, sorted by path.
func dump(m *Manifest) []string {
	all := m.all()
	slices.SortFunc(all, func(a, b *entry) int { return strings.Compare(a.path, b.path) })
	var out []string
	for _, e := range all {
		out = append(out, fmt.Sprintf("%+v", *e))
	}
	return out
}

// BenchmarkLoadManifest38k is the last manifest's load on a 37,889-file
// tree (paths as long as the Go source's), which every call that changes
// something pays, beside its command: the read and the records' headers.
func BenchmarkLoadManifest38k(b *testing.B) {
	useStateDir(b)
	var list []*entry
	for i := range 37889 {
		list = append(list, &entry{path: fmt.Sprintf("src/cmd/compile/internal/dir%03d/file_%05d.go", i/40, i), mode: 0o100644, size: int64(i)})
	}
	if err := New(list, "").Save(1, 1); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if Load(1) == nil {
			b.Fatal("did not load")
		}
	}
}

// A manifest the agent wrote (it lives in the sandbox's /tmp) loads as
// none or as records that parse, whatever its bytes, and saves back to
// what it loaded as.
func FuzzLoadManifest(f *testing.F) {
	useStateDir(f)
	m := New([]*entry{{path: "a", mode: 0o100644}, {path: "d", mode: protocol.ModeDir | 0o755}, {path: "d/b", mode: 0o100644, size: 3}}, "")
	if err := m.Save(1, 1); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(manifestPath(1))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data[len(manifestMagic):])
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(manifestPath(2), append([]byte(manifestMagic), b...), 0o600); err != nil {
			t.Fatal(err)
		}
		m := Load(2)
		if m == nil {
			return
		}
		want := dump(m)
		if err := m.Save(3, 3); err != nil {
			t.Fatal(err)
		}
		again := Load(3)
		if again == nil || !slices.Equal(dump(again), want) {
			t.Fatalf("saved again, it loads as %v, not %v", again, want)
		}
	})
}

// useStateDir points the manifests at a temp dir for the test.
func useStateDir(tb testing.TB) {
	old := StateDir
	StateDir = tb.TempDir()
	tb.Cleanup(func() { StateDir = old })
}
