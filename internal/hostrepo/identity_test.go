package hostrepo

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// openAt opens the repository found from loc with real git and no engine.
func openAt(t *testing.T, loc Location) (*Repo, error) {
	t.Helper()
	return open(context.Background(), testenv.Exec(), engine.Docker, loc, config.Default())
}

func mustOpen(t *testing.T, dir string) *Repo {
	t.Helper()
	m, err := openAt(t, Location{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRepositoryShapes(t *testing.T) {
	top := t.TempDir()
	main := testenv.NewRepo(t, filepath.Join(top, "my repo ü"), testenv.SmallFiles)
	m := mustOpen(t, filepath.Join(main, "src"))
	if m.Root != main || m.RepoPath != main || m.GitDir != filepath.Join(main, ".git") || m.RepoSlug != "my-repo" || !regexp.MustCompile(`^[0-9a-f]{8}$`).MatchString(m.RepoID) {
		t.Errorf("main work tree: root %q path %q gitdir %q slug %q id %q", m.Root, m.RepoPath, m.GitDir, m.RepoSlug, m.RepoID)
	}

	t.Run("linked worktree", func(t *testing.T) {
		wt := filepath.Join(top, "wt")
		testenv.Git(t, main, "worktree", "add", "-q", wt)
		w := mustOpen(t, wt)
		if w.Root != wt || w.RepoPath != main || w.GitDir != m.GitDir || w.RepoID != m.RepoID || w.RepoSlug != m.RepoSlug {
			t.Errorf("worktree: root %q path %q gitdir %q id %q slug %q", w.Root, w.RepoPath, w.GitDir, w.RepoID, w.RepoSlug)
		}
		if roots := w.worktreeRoots(context.Background()); len(roots) != 2 || roots[0] != main || roots[1] != wt {
			t.Errorf("worktree roots %q", roots)
		}
	})

	t.Run("detached HEAD", func(t *testing.T) {
		det := filepath.Join(top, "detached")
		testenv.Git(t, main, "worktree", "add", "-q", "--detach", det)
		d := mustOpen(t, det)
		if head, err := d.Git.ResolveCommit(context.Background(), "HEAD"); err != nil || head == "" {
			t.Errorf("HEAD of a detached work tree: %q %v", head, err)
		}
	})

	t.Run("bare", func(t *testing.T) {
		bare := filepath.Join(top, "bare.git")
		testenv.Git(t, top, "clone", "-q", "--bare", main, bare)
		_, err := openAt(t, Location{Dir: bare})
		var re *RepoError
		if !errors.Is(err, gitcli.ErrBare) || !errors.As(err, &re) || !strings.Contains(re.Fix, "git worktree add") {
			t.Errorf("bare: %v", err)
		}
	})

	t.Run("inside the git dir", func(t *testing.T) {
		if _, err := openAt(t, Location{Dir: filepath.Join(main, ".git")}); !errors.Is(err, gitcli.ErrInGitDir) {
			t.Errorf("in .git: %v", err)
		}
	})

	t.Run("not a repository", func(t *testing.T) {
		_, err := openAt(t, Location{Dir: t.TempDir()})
		if !errors.Is(err, gitcli.ErrNotARepo) || !strings.Contains(err.Error(), "--repo DIR") {
			t.Errorf("no repository: %v", err)
		}
	})

	t.Run("core.worktree", func(t *testing.T) {
		gitParent, work := filepath.Join(top, "cw"), filepath.Join(top, "cw-files")
		testenv.NewRepo(t, gitParent, testenv.SmallFiles)
		if err := os.CopyFS(work, os.DirFS(gitParent)); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(work, ".git")); err != nil {
			t.Fatal(err)
		}
		testenv.Git(t, gitParent, "config", "core.worktree", work)
		c := mustOpen(t, gitParent)
		if c.Root != work || c.GitDir != filepath.Join(gitParent, ".git") {
			t.Fatalf("core.worktree: root %q gitdir %q", c.Root, c.GitDir)
		}
		// Every later git call finds the repository, though the work tree
		// has no .git.
		if n, err := c.Git.Dirty(context.Background()); err != nil || n != 0 {
			t.Errorf("status in a core.worktree work tree: %d changes, %v", n, err)
		}
	})

	t.Run("GIT_DIR and GIT_WORK_TREE", func(t *testing.T) {
		g, err := openAt(t, Location{Dir: t.TempDir(), GitDir: filepath.Join(main, ".git"), WorkTree: main})
		if err != nil {
			t.Fatal(err)
		}
		if g.Root != main || g.RepoID != m.RepoID || !strings.Contains(strings.Join(g.Git.Global, " "), "--git-dir="+filepath.Join(main, ".git")) {
			t.Errorf("GIT_DIR: root %q id %q global %q", g.Root, g.RepoID, g.Git.Global)
		}
		if n, err := g.Git.Dirty(context.Background()); err != nil || n != 0 {
			t.Errorf("status through GIT_DIR: %d changes, %v", n, err)
		}
	})
}

// TestOwns decides ownership from labels: the id where there is one, else
// (an older release's) the repository or work tree path, else this
// repository's record naming the resource.
func TestOwns(t *testing.T) {
	ctx := context.Background()
	top := t.TempDir()
	main := testenv.NewRepo(t, filepath.Join(top, "app"), testenv.SmallFiles)
	wt := filepath.Join(top, "wt")
	testenv.Git(t, main, "worktree", "add", "-q", wt)
	other := testenv.NewRepo(t, filepath.Join(top, "other", "app"), testenv.SmallFiles)
	m := mustOpen(t, wt)
	if err := m.Store().Save(&layout.Record{Name: "old", Container: "litterbox-app-old", Volume: "litterbox-app-old-src"}); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(top, "removed-worktree")
	claimed := testenv.NewRepo(t, filepath.Join(top, "claimed", "app"), testenv.SmallFiles)
	if err := layout.New(filepath.Join(claimed, ".git")).Store().Save(&layout.Record{Name: "old", Container: "litterbox-app-old"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		what   string
		name   string
		labels map[string]string
		want   bool
	}{
		{"this id", "c", map[string]string{LabelRepoID: m.RepoID, LabelRepo: other}, true},
		{"another id, this path (a re-clone)", "c", map[string]string{LabelRepoID: "00000000", LabelRepo: main}, false},
		{"old label: the main work tree, named by our record", "litterbox-app-old", map[string]string{LabelRepo: main, LabelSandbox: "old"}, true},
		{"old label: a linked work tree, named by our record", "litterbox-app-old", map[string]string{LabelRepo: wt, LabelSandbox: "old"}, true},
		{"old label: the main work tree, no record", "litterbox-app-x", map[string]string{LabelRepo: main, LabelSandbox: "x"}, false},
		{"old label: another repository whose record names it (a copy's original)", "litterbox-app-old", map[string]string{LabelRepo: claimed, LabelSandbox: "old"}, false},
		{"old label: another repository that does not claim it (moved away, re-cloned)", "litterbox-app-old", map[string]string{LabelRepo: other, LabelSandbox: "old"}, true},
		{"old label: gone, named by our record", "litterbox-app-old", map[string]string{LabelRepo: gone, LabelSandbox: "old"}, true},
		{"old label: gone, not ours", "litterbox-app-new", map[string]string{LabelRepo: gone, LabelSandbox: "old"}, false},
		{"old volume: no repository, named by our record", "litterbox-app-old-src", map[string]string{LabelSandbox: "old"}, true},
		{"old volume: no repository, no record", "litterbox-app-x-src", map[string]string{LabelSandbox: "x"}, false},
		{"a hostile sandbox label", "litterbox-app-old", map[string]string{LabelSandbox: "../../sandboxes/old"}, false},
		{"no labels", "c", nil, false},
	} {
		if got := m.Owns(ctx, tc.name, tc.labels); got != tc.want {
			t.Errorf("%s: owns = %v, want %v", tc.what, got, tc.want)
		}
	}
}

func TestNotFoundNamesWhatExists(t *testing.T) {
	m := mustOpen(t, testenv.NewRepo(t, filepath.Join(t.TempDir(), "app"), testenv.SmallFiles))
	ctx := context.Background()
	if err := m.NotFound(ctx, "x"); err.Error() != "sandbox 'x' not found: this repository has no sandboxes (create one with litterbox create NAME, or sandbox-create over MCP)" {
		t.Errorf("none: %v", err)
	}
	// A branch alone and a record alone both count.
	testenv.Git(t, m.Root, "branch", "litterbox/b-branch")
	if err := m.Store().Save(&layout.Record{Name: "a-record"}); err != nil {
		t.Fatal(err)
	}
	if err := m.NotFound(ctx, "x"); err.Error() != "sandbox 'x' not found: this repository has a-record, b-branch" {
		t.Errorf("two: %v", err)
	}
	for i := range 9 {
		testenv.Git(t, m.Root, "branch", "litterbox/c"+string(rune('0'+i)))
	}
	if err := m.NotFound(ctx, "x"); !strings.HasSuffix(err.Error(), "has a-record, b-branch, c0, c1, c2, c3, c4, c5 and 3 more (litterbox list)") {
		t.Errorf("many: %v", err)
	}
}

func TestCommonDirOf(t *testing.T) {
	top := t.TempDir()
	main := testenv.NewRepo(t, filepath.Join(top, "main"), testenv.SmallFiles)
	wt := filepath.Join(top, "wt")
	testenv.Git(t, main, "worktree", "add", "-q", wt)
	for root, want := range map[string]string{main: filepath.Join(main, ".git"), wt: filepath.Join(main, ".git"), top: filepath.Join(top, ".git")} {
		if got := commonDirOf(root); got != want {
			t.Errorf("commonDirOf(%s) = %s, want %s", root, got, want)
		}
	}
}

// A record's container id is taken as proof only by the repository whose
// name the record's container bears: in a copy of the repository (its
// own id), the record names the original's container, and its id is not
// used, so calls go through the label check, which refuses it.
func TestContainerIDProvesOnlyToItsRepository(t *testing.T) {
	top := t.TempDir()
	orig := mustOpen(t, testenv.NewRepo(t, filepath.Join(top, "orig"), testenv.SmallFiles))
	n := orig.Names("x")
	id := strings.Repeat("ab", 32)
	rec := &layout.Record{Name: "x", Branch: n.Branch, Container: n.Container, Volume: n.Volume, ContainerID: id}
	if err := orig.Store().Save(rec); err != nil {
		t.Fatal(err)
	}
	if got := orig.Names("x").ID; got != id {
		t.Fatalf("the original's names carry id %q", got)
	}
	cp := filepath.Join(top, "copy")
	if _, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "cp", Args: []string{"-a", orig.Root, cp}}); err != nil {
		t.Fatal(err)
	}
	c := mustOpen(t, cp)
	if c.RepoID == orig.RepoID {
		t.Fatal("the copy kept the original's id")
	}
	if got := c.Names("x"); got.ID != "" || got.Container != n.Container {
		t.Errorf("in the copy, x is %+v: the original's container, by id", got)
	}
	if b := c.Box("x"); b.Name != n.Container {
		t.Errorf("the copy's calls would address %q", b.Name)
	}
}
