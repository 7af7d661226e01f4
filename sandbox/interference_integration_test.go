//go:build integration

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// A repository moved to another directory: its sandbox still answers there,
// listed as missing (its container carries the old path), and delete there
// removes the container, volume, branch and state, as its names are recorded.
func TestIntegrationRepoMovedKeepsItsSandboxesDeletable(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	if _, err := m.Create(ctx, CreateOptions{Name: "mover"}); err != nil {
		t.Fatal(err)
	}
	moved := filepath.Join(t.TempDir(), filepath.Base(m.Root))
	if err := os.Rename(m.Root, moved); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { testenv.RemoveAll(m.Root, m.RepoSlug) })
	m2, err := Open(ctx, testenv.Exec(), Docker, moved, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	list, err := m2.List(ctx, false)
	if err != nil || len(list) != 1 || list[0].Name != "mover" {
		t.Fatalf("list after the move: %+v %v", list, err)
	}
	all, err := m2.List(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Name == "mover" && s.Repo == m.Root && !s.RepoGone {
			t.Errorf("the old path is not marked gone: %+v", s)
		}
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
	c, err := m.Create(ctx, CreateOptions{Name: "orphan"})
	if err != nil {
		t.Fatal(err)
	}
	gone := m.Root
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
			if !s.RepoGone || s.Status != StatusActive {
				t.Errorf("listed as %+v, want active and repo gone", s)
			}
		}
	}
	if !found {
		t.Fatalf("list --all-repos does not show the orphan: %+v", all)
	}
	if _, err := DeleteOrphan(ctx, testenv.Exec(), Docker, gone, "orphan", false); !errorAs[*ActiveError](err) {
		t.Errorf("delete of a running orphan without force: %v", err)
	}
	d, err := DeleteOrphan(ctx, testenv.Exec(), Docker, gone, "orphan", true)
	if err != nil || len(d.Removed) != 2 {
		t.Fatalf("DeleteOrphan: %+v %v", d, err)
	}
	if out, _ := testenv.Docker("ps", "-aq", "--filter", "name=^"+c.Container+"$"); out != "" {
		t.Errorf("container %s left", c.Container)
	}
	if out, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name=^"+c.Container+"-src$"); out != "" {
		t.Errorf("volume left: %s", out)
	}
	if _, err := DeleteOrphan(ctx, testenv.Exec(), Docker, gone, "orphan", true); err == nil {
		t.Error("a second DeleteOrphan found something")
	}
}
