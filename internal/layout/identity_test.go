package layout

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestRepoIdentityIsStableAndPerRepository(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	idA, err := RepoID(a)
	if err != nil || !idRE.MatchString(idA) {
		t.Fatalf("first id %q %v", idA, err)
	}
	if again, err := RepoID(a); again != idA || err != nil {
		t.Errorf("second read %q %v, want %q", again, err, idA)
	}
	if idB, _ := RepoID(b); idB == idA {
		t.Errorf("two repositories share id %s", idA)
	}
}

func TestRepoIdentityFollowsAMoveButNotACopy(t *testing.T) {
	root := t.TempDir()
	orig := filepath.Join(root, "orig", ".git")
	if err := os.MkdirAll(orig, 0o755); err != nil {
		t.Fatal(err)
	}
	id, err := RepoID(orig)
	if err != nil {
		t.Fatal(err)
	}

	moved := filepath.Join(root, "moved", ".git")
	if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(orig, moved); err != nil {
		t.Fatal(err)
	}
	if got, err := RepoID(moved); got != id || err != nil {
		t.Fatalf("after a move: %q %v, want %q", got, err, id)
	}
	if f, _ := readIdentity(moved); f.CommonDir != moved {
		t.Errorf("the moved file still says %s", f.CommonDir)
	}

	copied := filepath.Join(root, "copy", ".git")
	if err := os.CopyFS(copied, os.DirFS(moved)); err != nil {
		t.Fatal(err)
	}
	got, err := RepoID(copied)
	if err != nil || got == id || !idRE.MatchString(got) {
		t.Fatalf("a copy with its original in place got %q %v (original %q)", got, err, id)
	}
	if still, _ := RepoID(moved); still != id {
		t.Errorf("the original's id changed to %q", still)
	}
	// A symlinked path to the same directory is neither.
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Dir(moved), link); err != nil {
		t.Fatal(err)
	}
	if got, _ := RepoID(filepath.Join(link, ".git")); got != id {
		t.Errorf("through a symlink: %q, want %q", got, id)
	}
}

func TestRepoIdentityFirstUseRace(t *testing.T) {
	dir := t.TempDir()
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := RepoID(dir)
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("racing first uses got different ids: %v", ids)
		}
	}
}

func TestRepoIdentityDamaged(t *testing.T) {
	dir := t.TempDir()
	if err := WriteFileAtomic(Identity(dir), []byte("{")); err != nil {
		t.Fatal(err)
	}
	var de *DamagedIDError
	if _, err := RepoID(dir); !errors.As(err, &de) || !strings.Contains(err.Error(), "is damaged: write {\"id\"") {
		t.Errorf("damaged file: %v", err)
	}
}

// TestRepositoryShapes opens every shape of repository a user may run in.
