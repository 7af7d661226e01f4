//go:build integration

package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/review"
)

func TestIntegrationApplySquashConflictAndDirty(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	bash(t, m, "echo agent >> README.md && echo new > new.txt && chmod +x new.txt")
	bash(t, m, "echo more >> new.txt")
	head := testenv.Git(t, m.Root, "rev-parse", "HEAD")

	// Dirty: a staged change anywhere, or a change to a touched file.
	if err := os.WriteFile(filepath.Join(m.Root, "README.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(ctx, "work", review.Options{}); !errorAs[*review.DirtyError](err) || !strings.Contains(err.Error(), "README.md") {
		t.Errorf("dirty touched file: %v", err)
	}
	testenv.Git(t, m.Root, "checkout", "README.md")

	// Squash stages without committing.
	a, err := m.Apply(ctx, "work", review.Options{Squash: true})
	if err != nil || a.Commits != 2 {
		t.Fatalf("squash: %+v %v", a, err)
	}
	if got := testenv.Git(t, m.Root, "diff", "--cached", "--name-only"); got != "README.md\nnew.txt" {
		t.Errorf("staged %q", got)
	}
	if h := testenv.Git(t, m.Root, "rev-parse", "HEAD"); h != head {
		t.Error("squash committed")
	}
	if _, err := m.Apply(ctx, "work", review.Options{}); !errorAs[*review.DirtyError](err) {
		t.Errorf("staged index: %v", err)
	}
	testenv.Git(t, m.Root, "reset", "-q", "--hard")

	// Plain apply keeps authorship, messages and modes.
	if _, err := m.Apply(ctx, "work", review.Options{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Git(t, m.Root, "log", "--format=%an|%s", head+"..HEAD"); !strings.HasPrefix(got, "work (litterbox)|bash: echo more") {
		t.Errorf("applied log %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(m.Root, "new.txt")); fi == nil || fi.Mode().Perm()&0o100 == 0 {
		t.Error("executable bit lost")
	}

	// A conflict stops in git am's state; the branch is untouched.
	tip := testenv.Git(t, m.Root, "rev-parse", "litterbox/work")
	testenv.Git(t, m.Root, "reset", "-q", "--hard", head)
	if err := os.WriteFile(filepath.Join(m.Root, "README.md"), []byte("conflicting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, m.Root, "commit", "-q", "-am", "user change")
	if _, err := m.Apply(ctx, "work", review.Options{Stdout: io.Discard, Stderr: io.Discard}); !errorAs[*review.ConflictError](err) || !strings.Contains(err.Error(), "git am --abort") {
		t.Fatalf("conflict: %v", err)
	}
	if _, err := os.Stat(filepath.Join(m.GitDir, "rebase-apply")); err != nil {
		t.Error("repository not left in git am's state")
	}
	if got := testenv.Git(t, m.Root, "rev-parse", "litterbox/work"); got != tip {
		t.Error("sandbox branch moved")
	}
	testenv.Git(t, m.Root, "am", "--abort")
	if got := testenv.Git(t, m.Root, "log", "-1", "--format=%s"); got != "user change" {
		t.Errorf("user's commit lost: %q", got)
	}
}
