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

	gomcp "github.com/mark3labs/mcp-go/mcp"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/mcpproc"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
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
		reviewed := testenv.Git(t, r.Repo.Root, "rev-parse", "litterbox/w")
		if _, err := servicectl.Background(ctx, r.Repo, "w", "writer", agent.BashOptions{Command: "sleep 1; echo bg > bg.txt; sleep 600"}); err != nil {
			t.Fatal(err)
		}
		late := make(chan *result.Act, 1)
		go func() {
			res, err := r.Agent.Bash(ctx, "w", agent.BashOptions{Command: "sleep 4; echo late > late.txt"})
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
			if got := testenv.Git(t, r.Repo.Root, "show", "HEAD:"+f); got != want {
				t.Errorf("%s on the host: %q, want %q", f, got, want)
			}
		}
		if got := testenv.Git(t, r.Repo.Root, "ls-tree", "--name-only", "HEAD"); !strings.Contains(got, "late.txt") {
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
		if got := testenv.Git(t, r.Repo.Root, "rev-list", "--count", base+"..HEAD"); got != "2" {
			t.Fatalf("%s commits on the host after the killed apply, want its 2 picks", got)
		}
		a, err := r.Apply(context.Background(), "w", review.Options{Stdout: io.Discard, Stderr: io.Discard})
		if err != nil || !a.NothingNew {
			t.Errorf("apply after the kill: %+v %v, want nothing new", a, err)
		}
		if got := testenv.Git(t, r.Repo.Root, "rev-list", "--count", base+"..HEAD"); got != "2" {
			t.Errorf("%s commits on the host, want each of the 2 once", got)
		}
	}},
	{name: "apply killed (kill -9) during its pick, git's index locked", side: "agent", expect: "the next apply names the interrupted apply, the lock and the one command that backs out; after it, apply takes each commit once and the tree is the branch's", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r, _ := reviewRepo(t, e)
		// A slow filter of the user's own, which the branch's second
		// commit meets: the pick is under way, its index locked, when
		// the kill comes.
		testenv.Git(t, r.Repo.Root, "config", "filter.slow.smudge", "sleep 3; cat")
		testenv.Git(t, r.Repo.Root, "config", "filter.slow.clean", "cat")
		writeFile(t, filepath.Join(r.Repo.Root, ".gitattributes"), "*.slow filter=slow\n")
		testenv.Git(t, r.Repo.Root, "add", ".gitattributes")
		testenv.Git(t, r.Repo.Root, "commit", "-qm", "slow files")
		base := testenv.Git(t, r.Repo.Root, "rev-parse", "HEAD")
		reviewBash(t, r, "echo one > one.txt")
		reviewBash(t, r, "echo two > two.slow")
		if !applyKilledAt(t, r, "cherry-pick", "1.5") {
			t.Fatal("the apply was not killed during its pick, so this row tests nothing")
		}
		lock := filepath.Join(r.Repo.GitDir, "index.lock")
		if _, err := os.Stat(lock); err != nil {
			t.Fatalf("the killed pick left no index.lock, so this row tests less than it says: %v", err)
		}
		_, err := r.Apply(ctx, "w", review.Options{Stdout: io.Discard, Stderr: io.Discard})
		want := "not applied: an apply of sandbox 'w' was interrupted (its git cherry-pick is still in progress), and git's index is locked"
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "rm -f "+runner.Quote(lock)+" && git cherry-pick --abort") {
			t.Fatalf("apply after the kill: %v\nwant it to say %q and the command", err, want)
		}
		if _, err := testenv.Exec().Run(ctx, runner.Cmd{Name: "sh", Args: []string{"-c", "rm -f " + runner.Quote(lock) + " && git cherry-pick --abort"}, Dir: r.Repo.Root}); err != nil {
			t.Fatalf("the command apply named: %v", err)
		}
		if _, err := r.Apply(ctx, "w", review.Options{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
			t.Fatalf("apply after backing out: %v", err)
		}
		if got := testenv.Git(t, r.Repo.Root, "rev-list", "--count", base+"..HEAD"); got != "2" {
			t.Errorf("%s commits on the host, want each of the 2 once", got)
		}
		if got := testenv.Git(t, r.Repo.Root, "diff", "--name-only", base, "HEAD"); got != "one.txt\ntwo.slow" {
			t.Errorf("the apply brought %q", got)
		}
		if got := readHostFile(t, r, "two.slow"); got != "two\n" {
			t.Errorf("two.slow on the host: %q", got)
		}
	}},
	{name: "a full disk during apply", side: "agent", expect: "apply fails naming git's error, not a conflict; branch, index and work tree are back as before (the user's edit kept, no truncated file); with space again, apply takes each commit once", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		mnt := smallDisk(t, "6m")
		r := repoIn(t, e, filepath.Join(mnt, testenv.UniqueName("lbfull")))
		if _, err := r.Create(ctx, create.CreateOptions{Name: "w"}); err != nil {
			t.Fatal(err)
		}
		base := testenv.Git(t, r.Repo.Root, "rev-parse", "HEAD")
		reviewBash(t, r, "head -c 900000 /dev/urandom > a.bin")
		reviewBash(t, r, "head -c 900000 /dev/urandom > b.bin")
		writeFile(t, filepath.Join(r.Repo.Root, "README.md"), "my edit\n")
		filler := fillDisk(t, mnt, 1200000)
		_, err := r.Apply(ctx, "w", review.Options{Stdout: io.Discard, Stderr: io.Discard})
		var conflict *review.ConflictError
		if err == nil || errors.As(err, &conflict) || !strings.Contains(err.Error(), "not on a conflict") || !strings.Contains(err.Error(), "back at") {
			t.Fatalf("apply on a full disk: %v", err)
		}
		if got := testenv.Git(t, r.Repo.Root, "rev-parse", "HEAD"); got != base {
			t.Errorf("HEAD %s, want it back at %s", got, base)
		}
		if st := testenv.Git(t, r.Repo.Root, "status", "--porcelain", "--untracked-files=all"); st != "M README.md" {
			t.Errorf("the work tree after the failed apply: %q, want the user's edit alone", st)
		}
		os.Remove(filler)
		a, err := r.Apply(ctx, "w", review.Options{Stdout: io.Discard, Stderr: io.Discard})
		if err != nil || a.Commits != 2 {
			t.Fatalf("apply with space again: %+v %v", a, err)
		}
		if got := testenv.Git(t, r.Repo.Root, "rev-list", "--count", base+"..HEAD"); got != "2" {
			t.Errorf("%s commits on the host, want 2", got)
		}
	}},
	{name: "an agent outliving kill -9 of litterbox run", side: "agent", gvisor: true, expect: "the session's processes end with it: the agent's file stops growing within seconds, and after one call commits what it wrote, the next commits nothing", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r, _ := reviewRepo(t, e)
		cmd := osexec.Command(litterboxBinary(t), "run", "w", "--", "sh", "-c", "while :; do echo x >> tick.txt; sleep 0.2; done")
		cmd.Dir = r.Repo.Root
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
		if _, err := r.Agent.Bash(ctx, "w", agent.BashOptions{Command: "true"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		if res, err := r.Agent.Bash(ctx, "w", agent.BashOptions{Command: "true"}); err != nil || res.Snapshot != "" || res.Between.Commit != "" {
			t.Errorf("a later call committed more of the agent's writes: %+v %v", res, err)
		}
		if got := testenv.Git(t, r.Repo.Root, "cat-file", "-s", "litterbox/w:tick.txt"); got != strings.TrimSpace(before) {
			t.Errorf("the branch holds %s bytes of tick.txt, the sandbox %s", got, strings.TrimSpace(before))
		}
	}},
	{name: "a full disk during a snapshot", side: "agent", expect: "the call that cannot store its file says so and commits nothing half made: git fsck is clean; with space again, the next call commits, and the branch holds exactly the sandbox's file", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		mnt := smallDisk(t, "6m")
		r := repoIn(t, e, filepath.Join(mnt, testenv.UniqueName("lbfull")))
		if _, err := r.Create(ctx, create.CreateOptions{Name: "w"}); err != nil {
			t.Fatal(err)
		}
		filler := fillDisk(t, mnt, 300000)
		res, err := r.Agent.Bash(ctx, "w", agent.BashOptions{Command: "head -c 1000000 /dev/urandom > big.bin; echo small > small.txt"})
		if err == nil && res.Snapshot != "" && branchFile(t, r, "big.bin") != "" {
			t.Fatalf("a call on a full disk stored a 1 MB file in 300 KB: %+v", res)
		}
		t.Logf("the call on a full disk: %v", err)
		testenv.Git(t, r.Repo.Root, "fsck", "--no-dangling", "--no-progress")
		os.Remove(filler)
		if _, err := r.Agent.Bash(ctx, "w", agent.BashOptions{Command: "true"}); err != nil {
			t.Fatalf("the next call, with space again: %v", err)
		}
		for _, f := range []string{"big.bin", "small.txt"} {
			if got, want := branchFile(t, r, f), exec(t, r, "w", "cat "+f); got != want {
				t.Errorf("%s: the branch holds %d bytes, the sandbox %d", f, len(got), len(want))
			}
		}
		testenv.Git(t, r.Repo.Root, "fsck", "--no-dangling", "--no-progress")
	}},
	{name: "litterbox exec killed (kill -9) at each git step of its commit", side: "agent", expect: "after each kill the next call commits, the branch holds exactly the sandbox's file, and git fsck finds nothing wrong", run: func(t *testing.T, e *attackEnv) {
		r, _ := reviewRepo(t, e)
		killAtEachGitStep(t, r, func(t *testing.T, n int, env []string, arm func()) {
			arm()
			cmd := osexec.Command(litterboxBinary(t), "exec", "w", "--", "sh", "-c", fmt.Sprintf("echo %d > f.txt", n))
			cmd.Dir, cmd.Env = r.Repo.Root, env
			_ = cmd.Run()
		})
	}},
	{name: "litterbox mcp killed (kill -9) at each git step of a bash call", side: "agent", expect: "after each kill the next call commits, the branch holds exactly the sandbox's file, and git fsck finds nothing wrong", run: func(t *testing.T, e *attackEnv) {
		r, _ := reviewRepo(t, e)
		killAtEachGitStep(t, r, func(t *testing.T, n int, env []string, arm func()) {
			for _, kv := range env {
				k, v, _ := strings.Cut(kv, "=")
				if k == "PATH" || k == "LB_KILL_AT" {
					t.Setenv(k, v)
				}
			}
			srv, err := mcpproc.Start(litterboxBinary(t), []string{"mcp", "--repo", r.Repo.Root, "--sandbox", "w"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Kill()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := mcpproc.Connect(ctx, srv, "attack")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			arm()
			req := gomcp.CallToolRequest{}
			req.Params.Name = "bash"
			req.Params.Arguments = map[string]any{"sandbox": "w", "command": fmt.Sprintf("echo %d > f.txt", n)}
			_, _ = c.CallTool(ctx, req)
		})
	}},
}

// killAtEachGitStep runs call (a process of litterbox's that changes
// f.txt in sandbox w, with env) again and again, killing it with SIGKILL
// at its first git command after it arms the count, then its second, and
// so on until a run ends without the kill; after each kill, the next call
// (in this process) commits, the branch's f.txt is the sandbox's, and git
// fsck is clean.
func killAtEachGitStep(t *testing.T, r *Manager, call func(t *testing.T, n int, env []string, arm func())) {
	t.Helper()
	ctx := context.Background()
	real, err := osexec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	count, killed, armed := filepath.Join(dir, "count"), filepath.Join(dir, "killed"), filepath.Join(dir, "armed")
	writeFile(t, filepath.Join(dir, "git"), fmt.Sprintf(`#!/bin/sh
if [ -e %[4]q ]; then
	n=$(cat %[1]q 2>/dev/null || echo 0); n=$((n+1)); echo $n > %[1]q
	if [ "$n" = "$LB_KILL_AT" ]; then : > %[2]q; kill -9 $PPID; exit 137; fi
fi
exec %[3]q "$@"
`, count, killed, real, armed))
	if err := os.Chmod(filepath.Join(dir, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	steps := 0
	for n := 1; n <= 40; n++ {
		os.Remove(count)
		os.Remove(killed)
		call(t, n, append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), fmt.Sprintf("LB_KILL_AT=%d", n)), func() { writeFile(t, armed, "") })
		os.Remove(armed)
		if _, err := os.Stat(killed); err != nil {
			break // the run ended on its own: every step was tried
		}
		steps++
		if _, err := r.Agent.Bash(ctx, "w", agent.BashOptions{Command: "true"}); err != nil {
			t.Fatalf("killed at git step %d: the next call: %v", n, err)
		}
		if got, want := branchFile(t, r, "f.txt"), exec(t, r, "w", "cat f.txt 2>/dev/null; true"); got != want {
			t.Errorf("killed at git step %d: the branch's f.txt %q, the sandbox's %q", n, got, want)
		}
		testenv.Git(t, r.Repo.Root, "fsck", "--no-dangling", "--no-progress")
	}
	if steps < 3 {
		t.Errorf("killed at %d git steps only, so this row tests little", steps)
	}
	t.Logf("killed at each of %d git steps", steps)
}

// branchFile is the content of p on sandbox w's branch, "" when it has
// none.
func branchFile(t *testing.T, r *Manager, p string) string {
	t.Helper()
	if testenv.Git(t, r.Repo.Root, "ls-tree", "--name-only", "litterbox/w", "--", p) == "" {
		return ""
	}
	res, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "git", Args: []string{"-C", r.Repo.Root, "cat-file", "blob", "litterbox/w:" + p}})
	if err != nil {
		t.Fatal(err)
	}
	return string(res.Stdout)
}

// smallDisk is a tmpfs of size, for a repository that runs out of space
// (mounting needs root, which CI has).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	mnt := t.TempDir()
	if out, err := osexec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("a small disk for the repository (tmpfs, as root, as CI runs): %v %s", err, out)
	}
	t.Cleanup(func() { _ = osexec.Command("umount", "-l", mnt).Run() })
	return mnt
}

// fillDisk fills the file system of dir but for about left bytes, with a
// file it returns.
func fillDisk(t *testing.T, dir string, left int64) string {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	writeFile(t, filler, strings.Repeat("x", int(int64(st.Bavail)*int64(st.Bsize)-left)))
	return filler
}

// repoIn is freshRepo's repository at dir.
func repoIn(t *testing.T, e *attackEnv, dir string) *Manager {
	t.Helper()
	testenv.NewRepo(t, dir, testenv.Files{"README.md": "hi\n"})
	r, err := Open(context.Background(), testenv.Exec(), engine.Docker, dir, e.m.Repo.Config)
	if err != nil {
		t.Fatal(err)
	}
	r.Repo.Config.Image = e.image
	testenv.CleanupRepo(t, r.Repo.Root, r.Repo.RepoSlug)
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
	cmd.Dir = r.Repo.Root
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
