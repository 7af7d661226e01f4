//go:build linux

package sandbox_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/sandbox/sandboxtest"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// The merge queue over the in-memory provider: each sandbox synced onto
// the branch as the merges before it left it, checked inside, and taken
// only when the check passes and changed nothing; the one that would
// conflict, the one that fails and the one whose check writes a tracked
// file are left as they were, with the reason.
func TestMemMergeQueue(t *testing.T) {
	m, _ := sandboxtest.Mem(t, testenv.Files{"shared.txt": "one\ntwo\nthree\n"})
	ctx := context.Background()
	steps := map[string]string{
		"a":      "echo a > a.txt",
		"b":      "echo b > b.txt",
		"broken": "echo BROKEN > notes.txt",
		"clash":  "sed -i s/one/CLASH/ shared.txt",
		"writer": "echo w > w.txt",
	}
	for _, n := range []string{"a", "b", "broken", "clash", "writer"} {
		if _, err := m.Create(ctx, create.CreateOptions{Name: n}); err != nil {
			t.Fatal(err)
		}
		if res, err := m.Agent.Bash(ctx, n, agent.BashOptions{Command: steps[n]}); err != nil || res.ExitCode != 0 {
			t.Fatalf("%s: %+v %v", n, res, err)
		}
	}
	root := m.Repo.Root
	if err := os.WriteFile(filepath.Join(root, "shared.txt"), []byte("MAIN\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, root, "commit", "-qam", "main changes line one")
	brokenTip := testenv.Git(t, root, "rev-parse", "litterbox/broken")
	check := `if grep -q BROKEN *.txt; then echo "BROKEN found"; exit 3; fi; if [ -e w.txt ]; then echo more >> w.txt; fi`
	out, err := m.MergeQueue(ctx, []string{"a", "clash", "broken", "writer", "b"}, sandbox.QueueOptions{
		Check: check, Review: review.Options{Stdout: io.Discard, Stderr: io.Discard},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sandbox.QueueOutcome{}
	for _, q := range out {
		got[q.Name] = q
	}
	for _, n := range []string{"a", "b"} {
		if q := got[n]; !q.Taken || q.Commits != 1 || q.Check == nil || q.Check.ExitCode != 0 {
			t.Errorf("%s: %+v", n, q)
		}
	}
	if q := got["clash"]; q.Taken || !strings.Contains(q.Reason, "would conflict with main in shared.txt; nothing changed") {
		t.Errorf("clash: %+v", q)
	}
	if q := got["broken"]; q.Taken || q.Reason != "check failed (exit 3): BROKEN found" {
		t.Errorf("broken: %+v", q)
	}
	if q := got["writer"]; q.Taken || !strings.Contains(q.Reason, "the check changed files git tracks") {
		t.Errorf("writer: %+v", q)
	}
	if files := testenv.Git(t, root, "ls-tree", "--name-only", "HEAD"); !strings.Contains(files, "a.txt\nb.txt") || strings.Contains(files, "notes.txt") || strings.Contains(files, "w.txt") {
		t.Errorf("HEAD holds %q", files)
	}
	// b went onto the branch with a's work: synced, not just picked.
	if got := testenv.Git(t, root, "log", "--format=%s", "-3"); !strings.HasPrefix(got, "bash: echo b > b.txt\nbash: echo a > a.txt") {
		t.Errorf("the branch's log: %q", got)
	}
	if tip := testenv.Git(t, root, "rev-parse", "litterbox/clash"); testenv.Git(t, root, "log", "-1", "--format=%s", tip) != "bash: sed -i s/one/CLASH/ shared.txt" {
		t.Errorf("clash was changed: %s", tip)
	}
	if testenv.Git(t, root, "rev-parse", "litterbox/broken") == brokenTip {
		t.Errorf("broken was not synced before its check")
	}
}
