//go:build integration

package sandbox

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// twinRepos makes two repositories with one basename ("app") and one
// committed [project] slug, and a Manager for each reading its config.
func twinRepos(t *testing.T) (a, b *Manager) {
	t.Helper()
	top := t.TempDir()
	slug := testenv.UniqueName("lbid")
	var ms []*Manager
	for _, side := range []string{"a", "b"} {
		files := testenv.Files{".litterbox.toml": "[project]\nslug = \"" + slug + "\"\n"}
		for k, v := range testenv.SmallFiles {
			files[k] = v
		}
		dir := testenv.NewRepo(t, filepath.Join(top, side, "app"), files)
		m, err := OpenRepo(context.Background(), testenv.Exec(), engine.Docker, hostrepo.Location{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if m.Repo.RepoSlug != slug {
			t.Fatalf("repo slug %q, want the committed %q", m.Repo.RepoSlug, slug)
		}
		testenv.CleanupRepo(t, m.Repo.Root, slug)
		ms = append(ms, m)
	}
	return ms[0], ms[1]
}

// fingerprint is what must not change in one repository while the other
// works: its container (by id, so a re-creation shows), its state, its
// branch and a file its agent wrote.
func fingerprint(t *testing.T, m *Manager, name string) string {
	t.Helper()
	n := m.Repo.Names(name)
	id, _ := testenv.Docker("inspect", "--format", "{{.Id}} {{.State.Status}}", n.Container)
	tip := testenv.Git(t, m.Repo.Root, "rev-parse", "--verify", "--quiet", n.Ref)
	vol, _ := testenv.Docker("volume", "inspect", "--format", "{{.Name}}", n.Volume)
	return strings.Join([]string{id, tip, vol}, " ")
}

func TestIntegrationTwoRepositoriesOneNameOneSlug(t *testing.T) {
	ctx := context.Background()
	a, b := twinRepos(t)
	for _, m := range []*Manager{a, b} {
		if _, err := m.Create(ctx, create.CreateOptions{Name: "x"}); err != nil {
			t.Fatal(err)
		}
		if _, err := m.Agent.Bash(ctx, "x", agent.BashOptions{Command: "echo " + m.Repo.RepoID + " > who"}); err != nil {
			t.Fatal(err)
		}
	}
	if a.Repo.Names("x").Container == b.Repo.Names("x").Container || a.Repo.Names("x").Volume == b.Repo.Names("x").Volume {
		t.Fatalf("both repositories use %s", a.Repo.Names("x").Container)
	}

	for _, pair := range [][2]*Manager{{a, b}, {b, a}} {
		me, other := pair[0], pair[1]
		before := fingerprint(t, other, "x")
		list, err := me.List(ctx, false)
		if err != nil || len(list) != 1 || list[0].Container != me.Repo.Names("x").Container || list[0].Repo != me.Repo.RepoPath {
			t.Errorf("list: %+v %v", list, err)
		}
		for _, op := range []func(context.Context, string) (Outcome, error){me.Pause, me.Resume} {
			if _, err := op(ctx, "x"); err != nil {
				t.Fatal(err)
			}
		}
		if got := exec(t, me, "x", "cat who"); got != me.Repo.RepoID+"\n" {
			t.Errorf("exec sees %q, want its own %q", got, me.Repo.RepoID)
		}
		if _, err := me.Agent.Write(ctx, "x", "mine.txt", []byte(me.Repo.RepoID+"\n")); err != nil {
			t.Fatal(err)
		}
		if r, err := me.Agent.Read(ctx, "x", "who", 0, 0); err != nil || r.Content != me.Repo.RepoID+"\n" {
			t.Errorf("read: %+v %v", r, err)
		}
		if err := me.Diff(ctx, "x", nil, io.Discard, io.Discard); err != nil {
			t.Errorf("diff: %v", err)
		}
		if _, err := me.Apply(ctx, "x", review.Options{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
			t.Fatalf("apply: %v", err)
		}
		if got := testenv.Git(t, me.Repo.Root, "show", "HEAD:mine.txt"); got != me.Repo.RepoID {
			t.Errorf("applied %q, want this repository's own work", got)
		}
		if after := fingerprint(t, other, "x"); after != before {
			t.Errorf("working in %s changed %s's sandbox:\n%s\n%s", me.Repo.Root, other.Repo.Root, before, after)
		}
	}

	// Delete without --force (paused) and merge in b leave a alone.
	before := fingerprint(t, a, "x")
	if _, err := b.Pause(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Delete(ctx, "x", false); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, create.CreateOptions{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Agent.Write(ctx, "x", "merged.txt", []byte("b\n")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Merge(ctx, "x", review.Options{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if after := fingerprint(t, a, "x"); after != before {
		t.Errorf("delete and merge in b changed a's sandbox:\n%s\n%s", before, after)
	}
	if _, err := a.Delete(ctx, "x", true); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, a, "x"); len(left) > 0 {
		t.Errorf("left after delete --force: %v", left)
	}
}

// TestIntegrationOlderReleaseSandboxes makes a sandbox the way the release
// before repository ids did (named litterbox-<slug>-<name>, labelled with the
// linked work tree it was made in, no id) and uses it from the main work
// tree; another repository with the same basename never sees it as its own.
func TestIntegrationOlderReleaseSandboxes(t *testing.T) {
	ctx := context.Background()
	top := t.TempDir()
	slug := testenv.UniqueName("lbold")
	main := testenv.NewRepo(t, filepath.Join(top, "a", slug), testenv.SmallFiles)
	wt := filepath.Join(top, "wt")
	testenv.Git(t, main, "worktree", "add", "-q", wt)
	testenv.CleanupRepo(t, main, slug)
	testenv.CleanupRepo(t, wt, slug)

	old, err := Open(ctx, testenv.Exec(), engine.Docker, wt, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	old.Repo.RepoID, old.Repo.RepoPath = "", wt
	if _, err := old.Create(ctx, create.CreateOptions{Name: "legacy"}); err != nil {
		t.Fatal(err)
	}
	// The old name, in the container and in the record that names it.
	legacyName := "litterbox-" + slug + "-legacy"
	if _, err := testenv.Docker("rename", old.Repo.Names("legacy").Container, legacyName); err != nil {
		t.Fatal(err)
	}
	rec, _ := old.Repo.Store().Load("legacy")
	rec.Container = legacyName
	if err := old.Repo.Store().Save(rec); err != nil {
		t.Fatal(err)
	}

	m, err := Open(ctx, testenv.Exec(), engine.Docker, main, old.Repo.Config)
	if err != nil {
		t.Fatal(err)
	}
	list, err := m.List(ctx, false)
	if err != nil || len(list) != 1 || list[0].Name != "legacy" || list[0].Status != create.StatusActive || list[0].Container != legacyName {
		t.Fatalf("list from the main work tree: %+v %v", list, err)
	}
	if _, err := m.Agent.Bash(ctx, "legacy", agent.BashOptions{Command: "echo still > works"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Pause(ctx, "legacy"); err != nil {
		t.Fatal(err)
	}

	other := testenv.NewRepo(t, filepath.Join(top, "b", slug), testenv.SmallFiles)
	o, err := Open(ctx, testenv.Exec(), engine.Docker, other, old.Repo.Config)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, other, slug)
	if mine, _ := o.List(ctx, false); len(mine) != 0 {
		t.Errorf("another repository lists %+v as its own", mine)
	}
	all, _ := o.List(ctx, true)
	for _, s := range all {
		if s.Container == legacyName && s.Repo != wt {
			t.Errorf("list --all-repos from elsewhere says %s belongs to %s", legacyName, s.Repo)
		}
	}
	// Even handed the old record (a copy of the repository would have it),
	// the other repository refuses to touch the container.
	if err := o.Repo.Store().Save(rec); err != nil {
		t.Fatal(err)
	}
	for _, op := range []func(context.Context, string) (Outcome, error){o.Pause, o.Resume} {
		if _, err := op(ctx, "legacy"); !errorAs[*hostrepo.ForeignError](err) || !strings.Contains(err.Error(), "belongs to "+wt) {
			t.Errorf("pause/resume of a foreign container: %v", err)
		}
	}
	d, err := o.Delete(ctx, "legacy", true)
	if err != nil || len(d.LeftAlone) != 1 || !strings.Contains(d.LeftAlone[0], legacyName) {
		t.Errorf("delete of a foreign record: %+v %v", d, err)
	}
	if st, _ := testenv.Docker("inspect", "--format", "{{.State.Status}}", legacyName); st != "paused" {
		t.Errorf("the foreign container is %q after the other repository's delete", st)
	}

	d, err = m.Delete(ctx, "legacy", false)
	if err != nil || len(d.LeftAlone) != 0 {
		t.Fatalf("delete of the old sandbox: %+v %v", d, err)
	}
	if left := leftovers(t, m, "legacy"); len(left) > 0 {
		t.Errorf("left: %v", left)
	}
	if _, err := testenv.Docker("inspect", legacyName); err == nil {
		t.Errorf("%s is still there", legacyName)
	}
}

// TestIntegrationCommaInRepositoryPath: a repository whose path holds a
// comma and a quote (docker reads --mount as CSV) gets a sandbox, lists it
// and deletes it.
func TestIntegrationCommaInRepositoryPath(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName(`lb,c"q`))
	testenv.NewRepo(t, dir, testenv.Files{"README.md": "hi\n"})
	m, err := Open(ctx, testenv.Exec(), engine.Docker, dir, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	if _, err := m.Create(ctx, create.CreateOptions{Name: "x"}); err != nil {
		t.Fatal(err)
	}
	if res, err := m.Agent.Bash(ctx, "x", agent.BashOptions{Command: "echo ok > ok.txt"}); err != nil || res.Snapshot == "" {
		t.Fatalf("bash: %+v %v", res, err)
	}
	if list, err := m.List(ctx, false); err != nil || len(list) != 1 || list[0].Repo != m.Repo.RepoPath {
		t.Fatalf("list: %+v %v", list, err)
	}
	if _, err := m.Delete(ctx, "x", true); err != nil {
		t.Fatal(err)
	}
}
