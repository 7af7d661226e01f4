//go:build integration

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// A repository moved to another directory keeps its sandboxes: its id moved
// with it, so they are active there and take agent calls (their containers'
// path label still says the old place, which list --all-repos from elsewhere
// marks gone), and delete there removes the container, volume, branch and
// state.
func TestIntegrationRepoMovedKeepsItsSandboxesDeletable(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	if _, err := m.Create(ctx, create.CreateOptions{Name: "mover"}); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), filepath.Base(m.Repo.Root))
	if err := os.Rename(m.Repo.Root, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.RemoveAll(m.Repo.Root, m.Repo.RepoSlug) })
	m2, err := Open(ctx, testenv.Exec(), engine.Docker, moved, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	list, err := m2.List(ctx, false)
	if err != nil || len(list) != 1 || list[0].Name != "mover" || list[0].Status != create.StatusActive || list[0].Repo != moved {
		t.Fatalf("list after the move: %+v %v", list, err)
	}
	if _, err := m2.Agent.Bash(ctx, "mover", agent.BashOptions{Command: "echo moved > here"}); err != nil {
		t.Fatalf("an agent call after the move: %v", err)
	}
	elsewhere, err := Open(ctx, testenv.Exec(), engine.Docker, testenv.NewRepo(t, filepath.Join(t.TempDir(), "elsewhere"), testenv.SmallFiles), config.Default())
	if err != nil {
		t.Fatal(err)
	}
	all, err := elsewhere.List(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, s := range all {
		if s.Container == list[0].Container {
			seen = true
			if s.Repo != m.Repo.Root || !s.RepoGone {
				t.Errorf("from elsewhere, the old path is not shown gone: %+v", s)
			}
		}
	}
	if !seen {
		t.Errorf("list --all-repos from elsewhere does not show %s", list[0].Container)
	}
	if _, err := m2.Delete(ctx, "mover", true); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, m2, "mover"); len(left) > 0 {
		t.Errorf("left after delete in the moved repository: %v", left)
	}
}

// A repository deleted with its sandbox still running: list --all-repos from
// elsewhere shows it, marked gone, and DeleteOrphan removes its container and
// volume by their labels.
func TestIntegrationRepoDeletedSandboxIsListedAndDeletable(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	c, err := m.Create(ctx, create.CreateOptions{Name: "orphan"})
	if err != nil {
		t.Fatal(err)
	}
	gone := m.Repo.Root
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	other := realManager(t)
	all, err := other.List(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range all {
		if s.Repo == gone && s.Name == "orphan" {
			found = true
			if !s.RepoGone || s.Status != create.StatusActive {
				t.Errorf("listed as %+v, want active and repo gone", s)
			}
		}
	}
	if !found {
		t.Fatalf("list --all-repos does not show the orphan: %+v", all)
	}
	if _, err := DeleteOrphan(ctx, testenv.Exec(), engine.Docker, gone, "orphan", false); !errorAs[*ActiveError](err) {
		t.Errorf("delete of a running orphan without force: %v", err)
	}
	d, err := DeleteOrphan(ctx, testenv.Exec(), engine.Docker, gone, "orphan", true)
	if err != nil || len(d.Removed) != 2 {
		t.Fatalf("DeleteOrphan: %+v %v", d, err)
	}
	if out, _ := testenv.Docker("ps", "-aq", "--filter", "name=^"+c.Container+"$"); out != "" {
		t.Errorf("container %s left", c.Container)
	}
	if out, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name=^"+c.Container+"-src$"); out != "" {
		t.Errorf("volume left: %s", out)
	}
	if _, err := DeleteOrphan(ctx, testenv.Exec(), engine.Docker, gone, "orphan", true); err == nil {
		t.Error("a second DeleteOrphan found something")
	}
}

// The user deletes a sandbox's branch: the next change is refused with a
// clear error and the branch is not made again behind their back; restoring
// the branch lets the next call commit the change, which was never lost,
// first, as a change made between calls.
func TestIntegrationBranchDeletedByTheUser(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	c, err := m.Create(ctx, create.CreateOptions{Name: "nobranch"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Agent.Write(ctx, c.Name, "first.txt", []byte("1\n")); err != nil {
		t.Fatal(err)
	}
	tip := testenv.Git(t, m.Repo.Root, "rev-parse", c.Branch)
	testenv.Git(t, m.Repo.Root, "branch", "-D", "-q", c.Branch)
	_, err = m.Agent.Write(ctx, c.Name, "second.txt", []byte("2\n"))
	if err == nil || !strings.Contains(err.Error(), "litterbox/nobranch") {
		t.Fatalf("write with the branch deleted: %v", err)
	}
	if out := testenv.Git(t, m.Repo.Root, "branch", "--list", c.Branch); out != "" {
		t.Fatalf("the branch was made again: %s", out)
	}
	testenv.Git(t, m.Repo.Root, "branch", c.Branch, tip)
	res, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "true"})
	if err != nil || res.Between.Commit == "" || res.Snapshot != "" {
		t.Fatalf("after restoring the branch: %+v %v", res, err)
	}
	if got := testenv.Git(t, m.Repo.Root, "show", c.Branch+":second.txt"); got != "2" {
		t.Fatalf("second.txt on the branch: %q", got)
	}
}
