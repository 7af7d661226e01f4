//go:build linux

package manifest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// A scan that re-reads only the directories PID 1 names finds what a full
// walk finds: the re-read directories' entries fresh, the others kept from
// the last manifest, nothing twice and nothing of what went away (a file
// become a directory, a directory gone with its subdirectories, new
// directories walked whole).
// root is the tree the scan tests work on, made by each test.
var root string

func TestWalkDirtyMatchesAFullWalk(t *testing.T) {
	root = t.TempDir()
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
	before, err := Walk(root, Prune(nil), "")
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
	d, err := WalkDirty(root, New(before, ""), []string{"a", "", "c", "e", "e/f"}, Prune(nil))
	if err != nil {
		t.Fatal(err)
	}
	list := d.Cur.all()
	full, err := Walk(root, Prune(nil), "")
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

// Scan after scan of a tree changed at random (files written, removed,
// replaced by directories; directories made, empty or not, removed and
// moved), each
// reading only the directories whose entries changed and keeping the
// other records as saved, reports exactly the files whose content or
// kind changed and the files gone, as a comparison of the whole trees
// would, and its manifest loads back as a full walk finds the tree.
func TestScansReportWhatChanged(t *testing.T) {
	root = filepath.Join(t.TempDir(), "src")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	useStateDir(t)
	rng := rand.New(rand.NewPCG(1, 2))
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%d/e%d/f%d", i%7, i%5, i)] = fmt.Sprint(i)
	}
	writeTree(t, files)
	list, err := Walk(root, Prune(nil), "")
	if err != nil {
		t.Fatal(err)
	}
	m := New(list, "")
	hashAll(root, list)
	if err := m.Save(1, 1); err != nil {
		t.Fatal(err)
	}
	for gen := uint64(1); gen < 40; gen++ {
		before := treeOf(t)
		mutate(t, rng, gen)
		after := treeOf(t)
		old := Load(gen)
		if old == nil {
			t.Fatalf("round %d: Manifest %d did not load", gen, gen)
		}
		d, err := WalkDirty(root, old, dirtyDirs(before, after), Prune(nil))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range d.fresh {
			if o := d.beforeIdx[e.path]; o != nil {
				o.seen = o.kind() == e.kind()
			}
		}
		list, dirty := d.Changes(nil, 0, 0) // every file racy: compared by content
		got := map[string]byte{}
		for _, c := range list {
			got[c.Path] = c.Op
		}
		want := map[string]byte{}
		for p, a := range after {
			if b, ok := before[p]; a != "dir" && (!ok || b != a) {
				want[p] = protocol.Changed
			}
		}
		for p, b := range before {
			if a, ok := after[p]; b != "dir" && (!ok || a == "dir") {
				want[p] = protocol.Removed
			}
		}
		if !maps.Equal(got, want) {
			t.Fatalf("round %d reported\n%v\nwant\n%v", gen, got, want)
		}
		// As the scan does: an unchanged manifest is the last one, linked.
		if dirty {
			err = d.Cur.Save(gen+1, gen)
		} else {
			err = Link(gen, gen+1)
		}
		if err != nil {
			t.Fatal(err)
		}
		full, err := Walk(root, Prune(nil), "")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := names(Load(gen+1).all()), names(full); !slices.Equal(got, want) {
			t.Fatalf("round %d saved\n%q\nwant, as a full walk,\n%q", gen, got, want)
		}
	}
}

func writeTree(t *testing.T, files map[string]string) {
	t.Helper()
	for p, content := range files {
		f := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// treeOf maps every path under root to its content, "dir" for a directory.
func treeOf(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if de.IsDir() {
			out[rel] = "dir"
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = "file:" + string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mutate changes the tree in a few random ways.
func mutate(t *testing.T, rng *rand.Rand, gen uint64) {
	t.Helper()
	files, dirs := kinds(treeOf(t))
	pick := func(l []string) string { return l[rng.IntN(len(l))] }
	for i := range 1 + rng.IntN(4) {
		var err error
		n := fmt.Sprintf("%d.%d", gen, i)
		switch k := rng.IntN(8); {
		case k == 0 && len(files) > 0: // rewritten
			err = os.WriteFile(filepath.Join(root, pick(files)), []byte("v"+n), 0o644)
		case k == 1 && len(files) > 0: // removed
			err = os.Remove(filepath.Join(root, pick(files)))
		case k == 2 && len(files) > 0: // a file become a directory
			f := filepath.Join(root, pick(files))
			if err = os.Remove(f); err == nil {
				writeTree(t, map[string]string{filepath.Join(strings.TrimPrefix(f, root+"/"), "in"): "in"})
			}
		case k == 3 && len(dirs) > 0: // a directory gone with everything in it
			err = os.RemoveAll(filepath.Join(root, pick(dirs)))
		case k == 4 && len(dirs) > 0: // a directory moved
			d := pick(dirs)
			err = os.Rename(filepath.Join(root, d), filepath.Join(root, "moved"+n))
		case k == 5: // a new tree
			writeTree(t, map[string]string{"new" + n + "/a/b": "b", "new" + n + "/c": "c"})
		case k == 7: // an empty directory
			err = os.Mkdir(filepath.Join(root, "empty"+n), 0o755)
		case k == 6 && len(dirs) > 0: // a new file in an old directory
			writeTree(t, map[string]string{filepath.Join(pick(dirs), "n"+n): "n"})
		}
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		files, dirs = kinds(treeOf(t))
	}
}

// kinds splits a tree's paths into files and directories, each sorted.
func kinds(tree map[string]string) (files, dirs []string) {
	for p, c := range tree {
		if c == "dir" {
			dirs = append(dirs, p)
		} else {
			files = append(files, p)
		}
	}
	slices.Sort(files)
	slices.Sort(dirs)
	return files, dirs
}

// dirtyDirs is what PID 1's watcher reports between two trees: the
// directory of every path added, changed or removed, and every new
// directory.
func dirtyDirs(before, after map[string]string) []string {
	set := map[string]bool{}
	for p, a := range after {
		if b, ok := before[p]; !ok || a != b {
			set[parentDir(p)] = true
			if a == "dir" {
				set[p] = true
			}
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			set[parentDir(p)] = true
		}
	}
	var out []string
	for d := range set {
		out = append(out, d)
	}
	return out
}

// A walk reads a wide tree with a bounded number of goroutines, and
// finds every directory of it: a goroutine for each directory waiting to
// be read held 100k stacks at once for a directory of 100k subdirectories.
func TestWalkOfAWideTreeHoldsFewGoroutines(t *testing.T) {
	root := t.TempDir()
	for i := range 2000 {
		if err := os.MkdirAll(filepath.Join(root, fmt.Sprintf("d%d", i), "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before := runtime.NumGoroutine()
	peak := before
	done := make(chan struct{})
	go func() {
		defer close(done)
		list, err := Walk(root, nil, "")
		if err != nil || len(list) != 4000 {
			t.Errorf("the walk found %d entries (%v), want 4000", len(list), err)
		}
	}()
	for watching := true; watching; {
		select {
		case <-done:
			watching = false
		default:
			peak = max(peak, runtime.NumGoroutine())
			runtime.Gosched()
		}
	}
	if extra := peak - before - 1; extra > walkers {
		t.Errorf("the walk ran %d goroutines at once, want at most %d", extra, walkers)
	}
}

// A rule file the walk saw regular and a process of the sandbox swapped
// for a fifo before the scan read it is left out at once: the read never
// waits for a writer (it waited until the call's deadline).
func TestRuleFileSwappedForAFifoIsNotWaitedFor(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("dist/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := WalkAll(root, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := make(chan *protocol.Dirs, 1)
	go func() { got <- d.Dirs(true) }()
	select {
	case dirs := <-got:
		if len(dirs.Rules) != 0 {
			t.Errorf("the fifo's rules: %+v, want none", dirs.Rules)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("reading a rule file swapped for a fifo waits for a writer")
	}
}
