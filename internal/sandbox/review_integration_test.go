//go:build integration

package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/milestone"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

func TestIntegrationApplySquashConflictAndDirty(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	bash(t, m, "echo agent >> README.md && echo new > new.txt && chmod +x new.txt")
	bash(t, m, "echo more >> new.txt")
	head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")

	// Dirty: a staged change anywhere, or a change to a touched file.
	if err := os.WriteFile(filepath.Join(m.Repo.Root, "README.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Apply(ctx, "work", review.Options{}); !errorAs[*review.DirtyError](err) || !strings.Contains(err.Error(), "README.md") {
		t.Errorf("dirty touched file: %v", err)
	}
	testenv.Git(t, m.Repo.Root, "checkout", "README.md")

	// Squash stages without committing.
	a, err := m.Apply(ctx, "work", review.Options{Squash: true})
	if err != nil || a.Commits != 2 {
		t.Fatalf("squash: %+v %v", a, err)
	}
	if got := testenv.Git(t, m.Repo.Root, "diff", "--cached", "--name-only"); got != "README.md\nnew.txt" {
		t.Errorf("staged %q", got)
	}
	if h := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD"); h != head {
		t.Error("squash committed")
	}
	// The user forgets it was applied (the staged change is still there).
	testenv.Git(t, m.Repo.Root, "update-ref", "-d", appliedRef("work"))
	if _, err := m.Apply(ctx, "work", review.Options{}); !errorAs[*review.DirtyError](err) {
		t.Errorf("staged index: %v", err)
	}
	testenv.Git(t, m.Repo.Root, "reset", "-q", "--hard")

	// Plain apply keeps authorship, messages and modes.
	if _, err := m.Apply(ctx, "work", review.Options{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Git(t, m.Repo.Root, "log", "--format=%an|%s", head+"..HEAD"); !strings.HasPrefix(got, "work (litterbox)|bash: echo more") {
		t.Errorf("applied log %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(m.Repo.Root, "new.txt")); fi == nil || fi.Mode().Perm()&0o100 == 0 {
		t.Error("executable bit lost")
	}

	// A conflict stops in git cherry-pick's state; the branch is untouched.
	tip := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work")
	testenv.Git(t, m.Repo.Root, "reset", "-q", "--hard", head)
	testenv.Git(t, m.Repo.Root, "update-ref", "-d", appliedRef("work"))
	if err := os.WriteFile(filepath.Join(m.Repo.Root, "README.md"), []byte("conflicting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, m.Repo.Root, "commit", "-q", "-am", "user change")
	if _, err := m.Apply(ctx, "work", review.Options{Stdout: io.Discard, Stderr: io.Discard}); !errorAs[*review.ConflictError](err) || !strings.Contains(err.Error(), "git cherry-pick --abort") {
		t.Fatalf("conflict: %v", err)
	}
	if _, err := os.Stat(filepath.Join(m.Repo.GitDir, "CHERRY_PICK_HEAD")); err != nil {
		t.Error("repository not left in git cherry-pick's state")
	}
	if got := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work"); got != tip {
		t.Error("sandbox branch moved")
	}
	testenv.Git(t, m.Repo.Root, "cherry-pick", "--abort")
	if got := testenv.Git(t, m.Repo.Root, "log", "-1", "--format=%s"); got != "user change" {
		t.Errorf("user's commit lost: %q", got)
	}
}

// applyOK applies (or with squash stages) and returns how many commits it took.
func applyOK(t *testing.T, m *Manager, squash bool) *review.Applied {
	t.Helper()
	a, err := m.Apply(context.Background(), "work", review.Options{Squash: squash, Stdout: io.Discard, Stderr: io.Discard})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	return a
}

func sameTree(t *testing.T, m *Manager, rev string) {
	t.Helper()
	if got, want := testenv.Git(t, m.Repo.Root, "rev-parse", rev+"^{tree}"), testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work^{tree}"); got != want {
		t.Errorf("%s has tree %s, the branch %s:\n%s", rev, got, want, testenv.Git(t, m.Repo.Root, "diff", "--stat", rev, "litterbox/work"))
	}
}

// TestIntegrationApplyIncremental: apply, more work, apply again, then
// merge: each snapshot lands once and cleanly (two of them change one
// file), a second apply with nothing new changes nothing, and the host ends
// with the branch's tree.
func TestIntegrationApplyIncremental(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")
	bash(t, m, "echo one > n.txt")
	bash(t, m, "echo two >> n.txt")
	if a := applyOK(t, m, false); a.Commits != 2 || a.Since != "" {
		t.Fatalf("first apply: %+v", a)
	}
	first := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work")
	if got := testenv.Git(t, m.Repo.Root, "rev-parse", appliedRef("work")); got != first {
		t.Errorf("applied ref at %s, want the tip %s", got, first)
	}
	again := applyOK(t, m, false)
	if !again.NothingNew || again.Commits != 0 || again.Since != first {
		t.Errorf("second apply with nothing new: %+v", again)
	}
	if got := testenv.Git(t, m.Repo.Root, "rev-list", "--count", head+"..HEAD"); got != "2" {
		t.Errorf("after apply twice the host has %s new commits, want 2", got)
	}
	var note strings.Builder
	if err := m.Diff(ctx, "work", []string{"--stat"}, io.Discard, &note); err != nil || !strings.Contains(note.String(), "was applied") {
		t.Errorf("diff's note on stderr: %q %v", note.String(), err)
	}

	bash(t, m, "echo three >> n.txt")
	bash(t, m, "echo x > x.txt")
	if a := applyOK(t, m, false); a.Commits != 2 || a.Since != first {
		t.Fatalf("incremental apply: %+v", a)
	}
	bash(t, m, "echo four >> n.txt")
	tip := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work")
	a, d, err := m.Merge(ctx, "work", review.Options{Stdout: io.Discard, Stderr: io.Discard})
	if err != nil || a.Commits != 1 {
		t.Fatalf("merge after applies: %+v %v", a, err)
	}
	if got := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD^{tree}"); got != testenv.Git(t, m.Repo.Root, "rev-parse", tip+"^{tree}") {
		t.Error("the host's tree after merge is not the branch's")
	}
	if got, want := testenv.Git(t, m.Repo.Root, "log", "--reverse", "--format=%s", head+"..HEAD"), testenv.Git(t, m.Repo.Root, "log", "--reverse", "--format=%s", head+".."+tip); got != want {
		t.Errorf("host commits:\n%s\nbranch commits:\n%s", got, want)
	}
	if !strings.Contains(strings.Join(d.Removed, ","), "ref "+appliedRef("work")) {
		t.Errorf("delete did not report the applied ref: %v", d.Removed)
	}
	if left := testenv.Git(t, m.Repo.Root, "for-each-ref", "refs/litterbox/"); left != "" {
		t.Errorf("left after merge: %s", left)
	}
	if st := testenv.Git(t, m.Repo.Root, "status", "--porcelain"); st != "" {
		t.Errorf("work tree not clean: %s", st)
	}
}

// TestIntegrationApplyAfterMilestone: a milestone that rewrites the branch
// after an apply, across the applied point or up to it, still gives the next
// apply only what is new, judged by trees.
func TestIntegrationApplyAfterMilestone(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	bash(t, m, "echo a > a.txt")
	if _, err := milestone.Make(ctx, m.Repo, "work", "m1"); err != nil {
		t.Fatal(err)
	}
	applyOK(t, m, false)
	bash(t, m, "echo b > b.txt")
	bash(t, m, "echo c >> a.txt")
	applyOK(t, m, false)
	bash(t, m, "echo d > d.txt")
	// m2 squashes b, c and d: no commit on the branch has the applied tree.
	if _, err := milestone.Make(ctx, m.Repo, "work", "m2 across the applied point"); err != nil {
		t.Fatal(err)
	}
	if a := applyOK(t, m, false); a.Commits != 1 {
		t.Fatalf("apply after a milestone across the applied point: %+v", a)
	}
	if got := testenv.Git(t, m.Repo.Root, "log", "-1", "--format=%s|%an", "HEAD"); got != "m2 across the applied point|work (litterbox)" {
		t.Errorf("the combined commit: %q", got)
	}
	if got := testenv.Git(t, m.Repo.Root, "diff-tree", "--no-commit-id", "--name-only", "-r", "HEAD"); got != "d.txt" {
		t.Errorf("the combined commit changes %q, want only d.txt", got)
	}
	sameTree(t, m, "HEAD")

	// m3 squashes up to exactly the applied tree: nothing new, then one.
	bash(t, m, "echo e > e.txt")
	applyOK(t, m, false)
	if _, err := milestone.Make(ctx, m.Repo, "work", "m3"); err != nil {
		t.Fatal(err)
	}
	if a := applyOK(t, m, false); !a.NothingNew {
		t.Errorf("apply after a milestone up to the applied point: %+v", a)
	}
	bash(t, m, "echo f > f.txt")
	if a := applyOK(t, m, false); a.Commits != 1 || a.NothingNew {
		t.Errorf("apply of one new commit after m3: %+v", a)
	}
	if got := testenv.Git(t, m.Repo.Root, "log", "-1", "--format=%s", "HEAD"); got != "bash: echo f > f.txt" {
		t.Errorf("last commit %q", got)
	}
	sameTree(t, m, "HEAD")
}

// TestIntegrationApplySquashIncremental: a second apply --squash stages only
// what came after the first.
// A sandbox whose container is gone (removed by hand) still merges: there
// is no /src to commit first, and the branch is the work.
func TestIntegrationMergeWithoutItsContainer(t *testing.T) {
	ctx := context.Background()
	m := toolSandbox(t)
	bash(t, m, "echo kept > kept.txt")
	// -v: its anonymous helper volume too, which nothing else would remove.
	if _, err := testenv.Docker("rm", "-f", "-v", m.Repo.Names("work").Container); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Merge(ctx, "work", review.Options{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
		t.Fatalf("merge of a sandbox without its container: %v", err)
	}
	if got := testenv.Git(t, m.Repo.Root, "show", "HEAD:kept.txt"); got != "kept" {
		t.Errorf("kept.txt on the host: %q", got)
	}
	if refs := testenv.Git(t, m.Repo.Root, "for-each-ref", "refs/heads/litterbox/"); refs != "" {
		t.Errorf("branches left: %s", refs)
	}
}

func TestIntegrationApplySquashIncremental(t *testing.T) {
	m := toolSandbox(t)
	bash(t, m, "echo one > n.txt")
	bash(t, m, "echo a > a.txt")
	if a := applyOK(t, m, true); a.Commits != 2 {
		t.Fatalf("squash: %+v", a)
	}
	testenv.Git(t, m.Repo.Root, "commit", "-q", "-m", "first part")
	bash(t, m, "echo two >> n.txt")
	bash(t, m, "echo b > b.txt")
	if a := applyOK(t, m, true); a.Commits != 2 {
		t.Fatalf("second squash: %+v", a)
	}
	if got := testenv.Git(t, m.Repo.Root, "diff", "--cached", "--name-only"); got != "b.txt\nn.txt" {
		t.Errorf("second squash staged %q, want b.txt and n.txt", got)
	}
	if got := testenv.Git(t, m.Repo.Root, "diff", "--cached", "n.txt"); !strings.Contains(got, "+two") || strings.Contains(got, "+one") {
		t.Errorf("staged n.txt change:\n%s", got)
	}
	testenv.Git(t, m.Repo.Root, "commit", "-q", "-m", "second part")
	sameTree(t, m, "HEAD")
	if a := applyOK(t, m, true); !a.NothingNew {
		t.Errorf("third squash: %+v", a)
	}
}

// TestIntegrationApplyRedundantCommit: a commit whose change the host
// already has (the user took it by hand) lands as an empty commit instead of
// stopping the pick half-way.
func TestIntegrationApplyRedundantCommit(t *testing.T) {
	m := toolSandbox(t)
	head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")
	bash(t, m, "echo a > a.txt")
	first := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/work")
	bash(t, m, "echo b > b.txt")
	testenv.Git(t, m.Repo.Root, "cherry-pick", first)
	if a := applyOK(t, m, false); a.Commits != 2 {
		t.Fatalf("apply: %+v", a)
	}
	sameTree(t, m, "HEAD")
	if got := testenv.Git(t, m.Repo.Root, "rev-list", "--count", head+"..HEAD"); got != "3" {
		t.Errorf("%s commits, want the user's and both of the sandbox's (one empty)", got)
	}
	for _, p := range []string{"CHERRY_PICK_HEAD", "sequencer"} {
		if _, err := os.Stat(filepath.Join(m.Repo.GitDir, p)); err == nil {
			t.Errorf("%s left behind", p)
		}
	}
}

// TestIntegrationApplyAfterConflict: a merge stopped on a conflict and
// finished by the user with git cherry-pick --continue is recorded by the
// next apply or merge, which then takes only what came after (no commit
// picked twice); one the user aborted is taken again in full.
func TestIntegrationApplyAfterConflict(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	quiet := review.Options{Stdout: io.Discard, Stderr: io.Discard}
	bash(t, m, "echo sandbox >> README.md")
	bash(t, m, "echo one > n.txt")
	if err := os.WriteFile(filepath.Join(m.Repo.Root, "README.md"), []byte("host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, m.Repo.Root, "commit", "-qam", "host edit")
	stopped := func() {
		t.Helper()
		var conflict *review.ConflictError
		if _, err := m.Apply(ctx, "work", quiet); !errors.As(err, &conflict) {
			t.Fatalf("apply onto a conflicting host commit: %v", err)
		}
	}

	// Aborted: the next apply takes everything again and stops again.
	stopped()
	testenv.Git(t, m.Repo.Root, "cherry-pick", "--abort")
	stopped()
	if _, err := m.Apply(ctx, "work", quiet); err == nil || !strings.Contains(err.Error(), "still in progress") {
		t.Fatalf("apply during the stopped pick: %v", err)
	}

	// Finished by hand: recorded, nothing new, then only the next commit.
	if err := os.WriteFile(filepath.Join(m.Repo.Root, "README.md"), []byte("resolved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, m.Repo.Root, "add", "README.md")
	testenv.Git(t, m.Repo.Root, "-c", "core.editor=true", "cherry-pick", "--continue")
	head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")
	if a := applyOK(t, m, false); !a.NothingNew {
		t.Fatalf("apply after the finished pick: %+v", a)
	}
	bash(t, m, "echo two >> n.txt")
	a, _, err := m.Merge(ctx, "work", quiet)
	if err != nil || a.Commits != 1 {
		t.Fatalf("merge after the finished pick: %+v %v", a, err)
	}
	if got := testenv.Git(t, m.Repo.Root, "log", "--format=%s", head+"..HEAD"); !strings.HasPrefix(got, "bash: echo two") || strings.Contains(got, "\n") {
		t.Errorf("merge picked %q, want only the new commit", got)
	}
	if got := testenv.Git(t, m.Repo.Root, "show", "HEAD:README.md", "HEAD:n.txt"); got != "resolved\none\ntwo" {
		t.Errorf("host files after merge: %q", got)
	}
}
