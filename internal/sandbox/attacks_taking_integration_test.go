//go:build integration

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// takingAttacks are the attack table's rows on taking work as bad luck
// would have it: a call that lands while merge runs, an apply killed
// (kill -9) after its pick and during it, a full disk. Taking work is
// atomic: it holds the sandbox, notes what it is about to pick before git
// starts, and undoes what is no conflict.
var takingAttacks = []attack{
	{name: "a call that lands while merge runs, and a background process's writes", side: "agent", expect: "merge waits for the call, commits what /src holds first, and refuses a branch that moved past the tip reviewed, keeping the sandbox; merged again, the host has every file and the call's commit: no work lost", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r, _ := reviewRepo(t, e)
		reviewBash(t, r, "echo one > one.txt")
		reviewed := testenv.Git(t, r.Root, "rev-parse", "litterbox/w")
		if _, err := r.Background(ctx, "w", "writer", agent.BashOptions{Command: "sleep 1; echo bg > bg.txt; sleep 600"}); err != nil {
			t.Fatal(err)
		}
		late := make(chan *agent.ActResult, 1)
		go func() {
			res, err := r.Bash(ctx, "w", agent.BashOptions{Command: "sleep 4; echo late > late.txt"})
			if err != nil {
				t.Errorf("the late call: %v", err)
			}
			late <- res
		}()
		time.Sleep(2 * time.Second)
		_, _, err := r.Merge(ctx, "w", review.Options{Tip: reviewed, Stdout: io.Discard, Stderr: io.Discard})
		if err == nil || !strings.Contains(err.Error(), "moved from "+reviewed[:12]) {
			t.Fatalf("merge of the tip reviewed, while a call ran: %v", err)
		}
		res := <-late
		if res == nil || res.Snapshot == "" {
			t.Fatalf("the late call committed nothing: %+v", res)
		}
		if _, _, err := r.Merge(ctx, "w", review.Options{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
			t.Fatalf("merge again: %v", err)
		}
		for f, want := range map[string]string{"one.txt": "one", "late.txt": "late", "bg.txt": "bg"} {
			if got := testenv.Git(t, r.Root, "show", "HEAD:"+f); got != want {
				t.Errorf("%s on the host: %q, want %q", f, got, want)
			}
		}
		if got := testenv.Git(t, r.Root, "ls-tree", "--name-only", "HEAD"); !strings.Contains(got, "late.txt") {
			t.Errorf("the call's work is not on the host: %s", got)
		}
	}},
	{name: "apply killed (kill -9) after its pick, before it recorded it", side: "agent", expect: "the next apply finds the pick on the branch and records it: nothing new, each commit on the host once", run: func(t *testing.T, e *attackEnv) {
		r, base := reviewRepo(t, e)
		reviewBash(t, r, "echo one > one.txt")
		reviewBash(t, r, "echo two > two.txt")
		killed := applyKilledAt(t, r, "update-ref -m litterbox: applied", "")
		if !killed {
			t.Fatal("the apply was not killed where it should be, so this row tests nothing")
		}
		if got := testenv.Git(t, r.Root, "rev-list", "--count", base+"..HEAD"); got != "2" {
			t.Fatalf("%s commits on the host after the killed apply, want its 2 picks", got)
		}
		a, err := r.Apply(context.Background(), "w", review.Options{Stdout: io.Discard, Stderr: io.Discard})
		if err != nil || !a.NothingNew {
			t.Errorf("apply after the kill: %+v %v, want nothing new", a, err)
		}
		if got := testenv.Git(t, r.Root, "rev-list", "--count", base+"..HEAD"); got != "2" {
			t.Errorf("%s commits on the host, want each of the 2 once", got)
		}
	}},
	{name: "apply killed (kill -9) during its pick, git's index locked", side: "agent", expect: "the next apply names the interrupted apply, the lock and the one command that backs out; after it, apply takes each commit once and the tree is the branch's", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r, base := reviewRepo(t, e)
		// A slow filter of the user's own, which the branch's second
		// commit meets: the pick is under way, its index locked, when
		// the kill comes.
		testenv.Git(t, r.Root, "config", "filter.slow.smudge", "sleep 3; cat")
		testenv.Git(t, r.Root, "config", "filter.slow.clean", "cat")
		writeFile(t, filepath.Join(r.Root, ".gitattributes"), "*.slow filter=slow\n")
		testenv.Git(t, r.Root, "add", ".gitattributes")
		testenv.Git(t, r.Root, "commit", "-qm", "slow files")
		base = testenv.Git(t, r.Root, "rev-parse", "HEAD")
		reviewBash(t, r, "echo one > one.txt")
		reviewBash(t, r, "echo two > two.slow")
		if !applyKilledAt(t, r, "cherry-pick", "1.5") {
			t.Fatal("the apply was not killed during its pick, so this row tests nothing")
		}
		lock := filepath.Join(r.GitDir, "index.lock")
		if _, err := os.Stat(lock); err != nil {
			t.Fatalf("the killed pick left no index.lock, so this row tests less than it says: %v", err)
		}
		_, err := r.Apply(ctx, "w", review.Options{Stdout: io.Discard, Stderr: io.Discard})
		want := "not applied: an apply of sandbox 'w' was interrupted (its git cherry-pick is still in progress), and git's index is locked"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "rm -f "+runner.Quote(lock)+" && git cherry-pick --abort") {
			t.Fatalf("apply after the kill: %v\nwant it to say %q and the command", err, want)
		}
		if _, err := testenv.Exec().Run(ctx, runner.Cmd{Name: "sh", Args: []string{"-c", "rm -f " + runner.Quote(lock) + " && git cherry-pick --abort"}, Dir: r.Root}); err != nil {
			t.Fatalf("the command apply named: %v", err)
		}
		if _, err := r.Apply(ctx, "w", review.Options{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
			t.Fatalf("apply after backing out: %v", err)
		}
		if got := testenv.Git(t, r.Root, "rev-list", "--count", base+"..HEAD"); got != "2" {
			t.Errorf("%s commits on the host, want each of the 2 once", got)
		}
		if got := testenv.Git(t, r.Root, "diff", "--name-only", base, "HEAD"); got != "one.txt\ntwo.slow" {
			t.Errorf("the apply brought %q", got)
		}
		if got := readHostFile(t, r, "two.slow"); got != "two\n" {
			t.Errorf("two.slow on the host: %q", got)
		}
	}},
	{name: "a full disk during apply", side: "agent", expect: "apply fails naming git's error, not a conflict; branch, index and work tree are back as before (the user's edit kept, no truncated file); with space again, apply takes each commit once", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		mnt := t.TempDir()
		if out, err := osexec.Command("mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", mnt).CombinedOutput(); err != nil {
			t.Fatalf("a small disk for the repository (tmpfs, as root, as CI runs): %v %s", err, out)
		}
		t.Cleanup(func() { _ = osexec.Command("umount", "-l", mnt).Run() })
		r := repoIn(t, e, filepath.Join(mnt, testenv.UniqueName("lbfull")))
		if _, err := r.Create(ctx, CreateOptions{Name: "w"}); err != nil {
			t.Fatal(err)
		}
		base := testenv.Git(t, r.Root, "rev-parse", "HEAD")
		reviewBash(t, r, "head -c 900000 /dev/urandom > a.bin")
		reviewBash(t, r, "head -c 900000 /dev/urandom > b.bin")
		writeFile(t, filepath.Join(r.Root, "README.md"), "my edit\n")
		var st syscall.Statfs_t
		if err := syscall.Statfs(mnt, &st); err != nil {
			t.Fatal(err)
		}
		free := int64(st.Bavail) * int64(st.Bsize)
		filler := filepath.Join(mnt, "filler")
		writeFile(t, filler, strings.Repeat("x", int(free-1200000)))
		_, err := r.Apply(ctx, "w", review.Options{Stdout: io.Discard, Stderr: io.Discard})
		var conflict *review.ConflictError
		if err == nil || errors.As(err, &conflict) || !strings.Contains(err.Error(), "not on a conflict") || !strings.Contains(err.Error(), "back at") {
			t.Fatalf("apply on a full disk: %v", err)
		}
		if got := testenv.Git(t, r.Root, "rev-parse", "HEAD"); got != base {
			t.Errorf("HEAD %s, want it back at %s", got, base)
		}
		if st := testenv.Git(t, r.Root, "status", "--porcelain", "--untracked-files=all"); st != "M README.md" {
			t.Errorf("the work tree after the failed apply: %q, want the user's edit alone", st)
		}
		os.Remove(filler)
		a, err := r.Apply(ctx, "w", review.Options{Stdout: io.Discard, Stderr: io.Discard})
		if err != nil || a.Commits != 2 {
			t.Fatalf("apply with space again: %+v %v", a, err)
		}
		if got := testenv.Git(t, r.Root, "rev-list", "--count", base+"..HEAD"); got != "2" {
			t.Errorf("%s commits on the host, want 2", got)
		}
	}},
	{name: "an agent outliving kill -9 of litterbox run", side: "agent", gvisor: true, expect: "the session's processes end with it: the agent's file stops growing within seconds, and after one call commits what it wrote, the next commits nothing", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r, _ := reviewRepo(t, e)
		cmd := osexec.Command(litterboxBinary(t), "run", "w", "--", "sh", "-c", "while :; do echo x >> tick.txt; sleep 0.2; done")
		cmd.Dir = r.Root
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(4 * time.Second)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		time.Sleep(2 * time.Second)
		before := exec(t, r, "w", "wc -c < tick.txt")
		if strings.TrimSpace(before) == "0" {
			t.Fatalf("the agent wrote nothing before the kill, so this row tests nothing")
		}
		time.Sleep(2 * time.Second)
		if after := exec(t, r, "w", "wc -c < tick.txt"); after != before {
			t.Errorf("the agent kept writing after litterbox run was killed: %s bytes, then %s", strings.TrimSpace(before), strings.TrimSpace(after))
		}
		// What it wrote before the kill is committed by the next call (or
		// was, by the session or an exec above), and nothing after.
		if _, err := r.Bash(ctx, "w", agent.BashOptions{Command: "true"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if res, err := r.Bash(ctx, "w", agent.BashOptions{Command: "true"}); err != nil || res.Snapshot != "" || res.Between.Commit != "" {
			t.Errorf("a later call committed more of the agent's writes: %+v %v", res, err)
		}
		if got := testenv.Git(t, r.Root, "cat-file", "-s", "litterbox/w:tick.txt"); got != strings.TrimSpace(before) {
			t.Errorf("the branch holds %s bytes of tick.txt, the sandbox %s", got, strings.TrimSpace(before))
		}
	}},
}

// repoIn is freshRepo's repository at dir.
func repoIn(t *testing.T, e *attackEnv, dir string) *Manager {
	t.Helper()
	testenv.NewRepo(t, dir, testenv.Files{"README.md": "hi\n"})
	r, err := Open(context.Background(), testenv.Exec(), engine.Docker, dir, e.m.Config)
	if err != nil {
		t.Fatal(err)
	}
	r.Config.Image = e.image
	testenv.CleanupRepo(t, r.Root, r.RepoSlug)
	return r
}

// applyKilledAt runs `litterbox apply w` (the binary) in r with a git on
// its PATH that, on the first command whose line holds match, kills the
// apply with SIGKILL: before running it when after is "", else that many
// seconds after starting it (and then kills that git too). It reports
// whether the kill came.
func applyKilledAt(t *testing.T, r *Manager, match, after string) bool {
	t.Helper()
	real, err := osexec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "killed")
	script := fmt.Sprintf(`#!/bin/sh
case "$*" in
*%q*)
	if [ ! -e %[2]q ]; then
		: > %[2]q
		if [ -z %[3]q ]; then kill -9 $PPID; exit 137; fi
		%[4]q "$@" & g=$!
		sleep %[3]s
		kill -9 $g $PPID
		exit 137
	fi;;
esac
exec %[4]q "$@"
`, match, marker, after, real)
	writeFile(t, filepath.Join(dir, "git"), script)
	if err := os.Chmod(filepath.Join(dir, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := osexec.Command(litterboxBinary(t), "apply", "w")
	cmd.Dir = r.Root
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	var ee *osexec.ExitError
	if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Logf("apply ended without the kill: %v\n%s", err, out)
	}
	_, statErr := os.Stat(marker)
	return statErr == nil
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// litterboxBinary is the litterbox command built from this tree, once per
// test process; TestMain removes it (removeBinary).
func litterboxBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "lbbin")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "litterbox")
		out, err := osexec.Command("go", "build", "-o", binaryPath, "github.com/litterbox-dev/litterbox/cmd/litterbox").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v %s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// removeBinary removes what litterboxBinary built.
func removeBinary() {
	if binaryPath != "" {
		os.RemoveAll(filepath.Dir(binaryPath))
	}
}
