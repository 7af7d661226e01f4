//go:build integration

package sandbox

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/basetree"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// treeVolume is the base tree volume sandbox name's /src lies over.
func treeVolume(t *testing.T, m *Manager, name string) string {
	t.Helper()
	rec, err := m.Repo.Store().Load(name)
	if err != nil || rec == nil || rec.Layer == nil {
		t.Fatalf("%s's record names no base tree: %+v %v", name, rec, err)
	}
	return rec.Layer.Base
}

// baseVolumes are the repository's base tree volumes on the engine.
func baseVolumes(t *testing.T, m *Manager) []string {
	t.Helper()
	out, _ := testenv.Docker("volume", "ls", "-q", "--filter", "label=dev.litterbox.managed="+basetree.Role, "--filter", "label=dev.litterbox.repo-id="+m.Repo.RepoID)
	v := strings.Fields(out)
	slices.Sort(v)
	return v
}

// treeOf lists /src of sandbox name: each file's mode, owner, digest and
// path, or for HEAD, what that listing must be.
func treeOf(t *testing.T, m *Manager, name string) string {
	t.Helper()
	return exec(t, m, name, `cd /src && find . -type f | sort | while read -r f; do printf '%s %s %s\n' "$(stat -c '%a %u:%g' "$f")" "$(md5sum < "$f" | cut -d' ' -f1)" "$f"; done`)
}

// TestIntegrationBaseTreeSharedAndPruned makes sandboxes of three commits:
// two of one commit share one base tree and see nothing of each other's
// writes, each commit gets a tree of its own, and once every sandbox is
// deleted the KeepUnused trees used last are all that stay.
func TestIntegrationBaseTreeSharedAndPruned(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	for _, n := range []string{"a", "b"} {
		if _, err := m.Create(ctx, create.CreateOptions{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	if treeVolume(t, m, "a") != treeVolume(t, m, "b") {
		t.Errorf("two sandboxes of one commit have two trees: %s, %s", treeVolume(t, m, "a"), treeVolume(t, m, "b"))
	}
	want := treeOf(t, m, "b")
	if res, err := m.Agent.Bash(ctx, "a", agent.BashOptions{Command: "echo changed > README.md && rm -f main.go && mkdir -p sub && mv sub moved && echo new > moved/new.txt"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("bash in a: %+v %v", res, err)
	}
	if got := treeOf(t, m, "b"); got != want {
		t.Errorf("b saw a's writes:\n%s\nwant:\n%s", got, want)
	}
	if got := testenv.Git(t, m.Repo.Root, "show", "litterbox/a:README.md"); got != "changed" {
		t.Errorf("a's branch holds README.md %q", got)
	}
	first := treeVolume(t, m, "a")
	var bases []string
	for i, n := range []string{"c", "d"} {
		testenv.Git(t, m.Repo.Root, "commit", "-q", "--allow-empty", "-m", fmt.Sprintf("commit %d", i))
		if _, err := m.Create(ctx, create.CreateOptions{Name: n}); err != nil {
			t.Fatal(err)
		}
		bases = append(bases, treeVolume(t, m, n))
	}
	if bases[0] == first || bases[1] == first || bases[0] == bases[1] {
		t.Errorf("three commits, trees %s %s %s: want three", first, bases[0], bases[1])
	}
	if got := len(baseVolumes(t, m)); got != 3 {
		t.Errorf("%d base tree volumes for three commits", got)
	}
	for _, n := range []string{"a", "b", "c", "d"} {
		if _, err := m.Delete(ctx, n, true); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(bases)
	if got := baseVolumes(t, m); !slices.Equal(got, bases) {
		t.Errorf("after every delete the engine keeps trees %v, want the %d used last %v", got, basetree.KeepUnused, bases)
	}
}

// TestIntegrationBaseTreeLostIsMadeAgain removes a base tree's volume
// behind Litterbox's back: the next create makes it again, exactly.
func TestIntegrationBaseTreeLostIsMadeAgain(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	if _, err := m.Create(ctx, create.CreateOptions{Name: "a"}); err != nil {
		t.Fatal(err)
	}
	want, base := treeOf(t, m, "a"), treeVolume(t, m, "a")
	if _, err := m.Delete(ctx, "a", true); err != nil {
		t.Fatal(err)
	}
	docker(t, "volume", "rm", base)
	if _, err := m.Create(ctx, create.CreateOptions{Name: "b"}); err != nil {
		t.Fatal(err)
	}
	if got := treeOf(t, m, "b"); got != want {
		t.Errorf("/src over the tree made again:\n%s\nwant:\n%s", got, want)
	}
}

// TestIntegrationBaseTreeKilledFillIsMadeAgain kills `litterbox create`
// with SIGKILL while it copies the first tree of a commit: the next create
// makes the tree again and its /src equals the commit, and nothing of the
// killed one is left once it is deleted.
func TestIntegrationBaseTreeKilledFillIsMadeAgain(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbkill"))
	testenv.NewRepo(t, dir, bigFiles(3000))
	m, err := Open(ctx, testenv.Exec(), engine.Docker, dir, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	real, err := osexec.LookPath("docker")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	// On the tree's copy into the fill box: start it, then kill the
	// create and the copy half way.
	writeFile(t, filepath.Join(bin, "docker"), fmt.Sprintf(`#!/bin/sh
case "$*" in
*"cp - "*.fill-*)
	%[1]q "$@" & c=$!
	sleep 0.3
	kill -9 $c $PPID
	exit 137;;
esac
exec %[1]q "$@"
`, real))
	if err := os.Chmod(filepath.Join(bin, "docker"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(litterboxBinary(t), "create", "killed")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	var ee *osexec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("create was not killed during the tree's copy: %v\n%s", err, out)
	}
	if got := len(baseVolumes(t, m)); got != 1 {
		t.Fatalf("%d base tree volumes after the kill, want the half-made one", got)
	}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "next"}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range strings.Split(testenv.Git(t, dir, "ls-files"), "\n") {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("644 1000:1000 %x ./%s", md5.Sum(data), f))
	}
	slices.SortFunc(want, func(a, b string) int { return strings.Compare(strings.Fields(a)[3], strings.Fields(b)[3]) })
	if got := strings.TrimSpace(treeOf(t, m, "next")); got != strings.Join(want, "\n") {
		t.Errorf("/src over the tree made after the kill differs from HEAD (%d lines, want %d)", strings.Count(got, "\n")+1, len(want))
	}
	if _, err := m.Delete(ctx, "killed", true); err != nil {
		t.Fatal(err)
	}
	n := m.Repo.Names("killed")
	if out, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name=^"+n.Container+"-"); out != "" {
		t.Errorf("the killed create's volumes are left: %s", out)
	}
	if refs := testenv.Git(t, dir, "for-each-ref", n.Ref); refs != "" {
		t.Errorf("the killed create's branch is left: %s", refs)
	}
	if out, _ := testenv.Docker("ps", "-aq", "--filter", "name=.fill-"); strings.Contains(out, m.Repo.RepoID) {
		t.Errorf("a fill box is left: %s", out)
	}
}

// TestIntegrationBaseTreePooled fills the warm pool over HEAD's tree: a
// create claims the entry with /src over the tree it would have made, a
// prune keeps a tree only an entry lies over, a commit makes the entry
// stale, and a drain lets the tree go.
func TestIntegrationBaseTreePooled(t *testing.T) {
	ctx := context.Background()
	m := pooledManager(t, 1)
	trees, err := m.Creator.Bases().List(ctx)
	if err != nil || len(trees) != 1 || len(trees[0].UsedBy) != 0 {
		t.Fatalf("after the fill, trees %+v %v: want HEAD's, named by no record", trees, err)
	}
	tree := trees[0].Volume
	// Only the entry lies over it: no prune takes it.
	if removed, left := m.Creator.Bases().Prune(ctx, 0); len(removed)+len(left) != 0 {
		t.Fatalf("prune with an entry over the tree: removed %v, left %v", removed, left)
	}
	c := createPooled(t, m, "warm")
	rec, _ := m.Repo.Store().Load("warm")
	if rec.Layer == nil || rec.Layer.Base != tree || rec.Layer.Upper != rec.Volume+"-upper" || !strings.Contains(rec.Volume, ".pool-") {
		t.Fatalf("the claimed sandbox's record: volume %s, layer %+v; want the entry's layers over %s", rec.Volume, rec.Layer, tree)
	}
	if got := exec(t, m, "warm", "cat /src/README.md"); got != testenv.SmallFiles["README.md"] {
		t.Errorf("/src of the claimed entry reads README.md %q", got)
	}
	if _, err := m.Delete(ctx, c.Name, true); err != nil {
		t.Fatal(err)
	}
	fillPool(t, m, 1)
	// A commit: the entry lies over the tree of another commit now.
	testenv.Git(t, m.Repo.Root, "commit", "-q", "--allow-empty", "-m", "moved on")
	st, err := m.Creator.PoolStatus(ctx)
	if err != nil || len(st.Ready) != 0 || len(st.Stale) != 1 {
		t.Fatalf("after a commit the pool is %+v %v; want its entry stale", st, err)
	}
	if _, err := m.Creator.DrainPool(ctx); err != nil {
		t.Fatal(err)
	}
	if removed, left := m.Creator.Bases().Prune(ctx, 0); len(removed) != 1 || len(left) != 0 {
		t.Errorf("prune after the drain: removed %v, left %v; want the tree", removed, left)
	}
	if got := baseVolumes(t, m); len(got) != 0 {
		t.Errorf("trees left: %v", got)
	}
}

// fullTree lists every entry of /src of sandbox name: its type, mode,
// owner and, for a file its digest, for a link its target.
func fullTree(t *testing.T, m *Manager, name string) string {
	t.Helper()
	return exec(t, m, name, `cd /src && find . | sort | while read -r f; do if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; `+
		`elif [ -f "$f" ]; then echo "$f $(stat -c '%A %u:%g' "$f") $(md5sum < "$f" | cut -d' ' -f1)"; else echo "$f $(stat -c '%A %u:%g' "$f")"; fi; done`)
}

// TestIntegrationForkOverBaseTree forks a sandbox over a base tree: the
// fork lies over the same tree, and its own layer, copied from only the
// source's, makes it hold exactly the source's /src: changed, removed and
// re-moded files, a directory removed and made again (which hides the
// tree's entries), types changed both ways, links and ignored files. The
// two then part: neither sees the other's writes.
func TestIntegrationForkOverBaseTree(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbforkt"))
	testenv.NewRepo(t, dir, testenv.Files{".gitignore": "node_modules/\n", "a.txt": "a\n", "d/x": "x\n", "d/y": "y\n",
		"opq/1": "1\n", "opq/2": "2\n", "typ": "file\n", "was/dir/f": "f\n", "keep/k": "k\n"})
	m, err := Open(ctx, testenv.Exec(), engine.Docker, dir, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	if _, err := m.Create(ctx, create.CreateOptions{Name: "src"}); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Agent.Bash(ctx, "src", agent.BashOptions{Command: "echo A > a.txt && rm d/y && rm -rf opq && mkdir opq && echo 3 > opq/3 && " +
		"rm typ && mkdir typ && echo f > typ/f && rm -rf was && echo file > was && mkdir -p node_modules/p && " +
		"for i in 1 2 3 4 5; do echo $i > node_modules/p/f$i; done && ln -s a.txt link && chmod 700 keep && chmod 600 keep/k"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	want := fullTree(t, m, "src")
	if _, err := m.Creator.Fork(ctx, create.ForkOptions{Source: "src", Name: "fork"}); err != nil {
		t.Fatal(err)
	}
	if treeVolume(t, m, "fork") != treeVolume(t, m, "src") {
		t.Errorf("the fork lies over %s, its source over %s", treeVolume(t, m, "fork"), treeVolume(t, m, "src"))
	}
	if got := fullTree(t, m, "fork"); got != want {
		t.Errorf("the fork holds\n%s\nwant the source's\n%s", got, want)
	}
	if got := fullTree(t, m, "src"); got != want {
		t.Errorf("the fork changed its source:\n%s", got)
	}
	if _, err := m.Agent.Bash(ctx, "fork", agent.BashOptions{Command: "echo fork > a.txt && rm -rf d"}); err != nil {
		t.Fatal(err)
	}
	if got := fullTree(t, m, "src"); got != want {
		t.Errorf("the fork's writes reached its source:\n%s", got)
	}
}
