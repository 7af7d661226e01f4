package forecast

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// merges counts the git merge-tree runs it passes on.
type merges struct {
	runner.Runner
	n atomic.Int32
}

func (m *merges) Run(ctx context.Context, c runner.Cmd) (runner.Result, error) {
	if slices.Contains(c.Args, "merge-tree") {
		m.n.Add(1)
	}
	return m.Runner.Run(ctx, c)
}

// branch commits files on a new branch from base and returns its tip.
func branch(t testing.TB, dir, name, base string, files map[string]string) string {
	t.Helper()
	testenv.Git(t, dir, "checkout", "-q", "-b", name, base)
	for f, body := range files {
		writeFile(t, filepath.Join(dir, f), body)
	}
	testenv.Git(t, dir, "add", "-A")
	testenv.Git(t, dir, "commit", "-q", "-m", name)
	tip := testenv.Git(t, dir, "rev-parse", "HEAD")
	testenv.Git(t, dir, "checkout", "-q", "main")
	return tip
}

// Three sandboxes from one base and a branch that moved: two change the
// same file each its own way (an overlap that conflicts), one changes the
// file the branch changed since (no clean merge onto it), one touches
// nothing of the others'. Asked again with the tips unchanged, the cache
// answers without a merge, and the host's work tree, index and HEAD stay
// as they were.
func TestTell(t *testing.T) {
	dir := testenv.NewRepo(t, filepath.Join(t.TempDir(), "repo"), testenv.Files{"x.txt": "x\n", "y.txt": "y\n", "z.txt": "z\n"})
	base := testenv.Git(t, dir, "rev-parse", "HEAD")
	works := []Work{
		{Name: "a", Base: base, Tip: branch(t, dir, "a", base, map[string]string{"x.txt": "a\n"})},
		{Name: "b", Base: base, Tip: branch(t, dir, "b", base, map[string]string{"x.txt": "b\n"})},
		{Name: "c", Base: base, Tip: branch(t, dir, "c", base, map[string]string{"y.txt": "c\n"})},
		{Name: "d", Base: base, Tip: branch(t, dir, "d", base, map[string]string{"new.txt": "d\n"})},
	}
	writeFile(t, filepath.Join(dir, "y.txt"), "main\n")
	testenv.Git(t, dir, "commit", "-q", "-am", "main moves")
	target := testenv.Git(t, dir, "rev-parse", "HEAD")
	before := testenv.Git(t, dir, "status", "--porcelain")

	count := &merges{Runner: testenv.Exec()}
	cachePath := filepath.Join(t.TempDir(), "forecast.json")
	teller := &Teller{Git: gitcli.New(dir, count), Cache: OpenCache(cachePath)}
	got, err := teller.Tell(context.Background(), target, works)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Forecast{
		"a": {Behind: 1, Clean: true, Overlaps: []string{"b"}, ConflictsWith: []string{"b"}},
		"b": {Behind: 1, Clean: true, Overlaps: []string{"a"}, ConflictsWith: []string{"a"}},
		"c": {Behind: 1, Clean: false, Conflicts: []string{"y.txt"}},
		"d": {Behind: 1, Clean: true},
	}
	for name, w := range want {
		if g := got[name]; !same(g, w) {
			t.Errorf("%s: %+v, want %+v", name, g, w)
		}
	}
	if n := count.n.Load(); n != 2 {
		t.Errorf("%d merges, want 2 (a with b, c onto the branch)", n)
	}
	if err := teller.Cache.Save(); err != nil {
		t.Fatal(err)
	}

	count.n.Store(0)
	again := &Teller{Git: gitcli.New(dir, count), Cache: OpenCache(cachePath)}
	got2, err := again.Tell(context.Background(), target, works)
	if err != nil {
		t.Fatal(err)
	}
	if n := count.n.Load(); n != 0 {
		t.Errorf("asked again with the same tips: %d merges, want none", n)
	}
	for name, w := range want {
		if !same(got2[name], w) {
			t.Errorf("from the cache, %s: %+v", name, got2[name])
		}
	}
	if after := testenv.Git(t, dir, "status", "--porcelain"); after != before || testenv.Git(t, dir, "rev-parse", "HEAD") != target {
		t.Errorf("the host's checkout changed: %q, HEAD %s", after, testenv.Git(t, dir, "rev-parse", "HEAD"))
	}
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func same(a, b Forecast) bool {
	return a.Behind == b.Behind && a.Clean == b.Clean && strings.Join(a.Conflicts, ",") == strings.Join(b.Conflicts, ",") &&
		strings.Join(a.Overlaps, ",") == strings.Join(b.Overlaps, ",") && strings.Join(a.ConflictsWith, ",") == strings.Join(b.ConflictsWith, ",")
}
