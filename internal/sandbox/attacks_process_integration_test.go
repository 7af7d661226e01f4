//go:build integration

package sandbox

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/services"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// processAttacks are the attack table's rows for a call's processes and PID 1 (issue 27, items 7 and 9).
var processAttacks = []attack{
	{name: "setsid env -i escapes the call", side: "agent", gvisor: true, expect: "the escapee is dead when the call returns", run: func(t *testing.T, e *attackEnv) {
		res := bash(t, e.m, looper("esc")+"setsid env -i /bin/sh /tmp/lbx-esc.sh >/dev/null 2>&1 </dev/null & echo started")
		if res.ExitCode != 0 || res.Stdout != "started\n" {
			t.Fatalf("the call: %+v", res)
		}
		noLooper(t, e, "esc")
	}},
	{name: "double fork", side: "agent", gvisor: true, expect: "the grandchild, adopted by PID 1, is dead when the call returns", run: func(t *testing.T, e *attackEnv) {
		bash(t, e.m, looper("dbl")+"( ( /bin/sh /tmp/lbx-dbl.sh >/dev/null 2>&1 </dev/null & ) & ); sleep 0.2")
		noLooper(t, e, "dbl")
	}},
	{name: "escapee holding the output open past the timeout", side: "agent", gvisor: true, expect: "the call returns within 10 s, timed out; a write waiting for the lock meanwhile is done within 10 s; the escapee is dead", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		var wrote time.Duration
		var werr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Second)
			t0 := time.Now()
			_, werr = e.m.Agent.Write(ctx, "work", "after-hold.txt", []byte("x\n"))
			wrote = time.Since(t0)
		}()
		t0 := time.Now()
		res, err := e.m.Agent.Bash(ctx, "work", agent.BashOptions{Timeout: 5 * time.Second,
			Command: looper("hold") + "setsid env -i /bin/sh /tmp/lbx-hold.sh & sleep 1000"})
		took := time.Since(t0)
		wg.Wait()
		t.Logf("the call took %v, the write %v", took.Round(time.Millisecond), wrote.Round(time.Millisecond))
		if err != nil || !res.TimedOut {
			t.Fatalf("the call: %+v, %v; want timed out", res, err)
		}
		if took > 10*time.Second {
			t.Errorf("the call took %v, want under 10 s", took)
		}
		if werr != nil || wrote > 10*time.Second {
			t.Errorf("the concurrent write: %v after %v, want done within 10 s", werr, wrote)
		}
		noLooper(t, e, "hold")
	}},
	{name: "cancel while an escapee runs", side: "agent", gvisor: true, expect: "the call returns within 5 s of the cancel, cancelled; the escapee is dead", run: func(t *testing.T, e *attackEnv) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(2*time.Second, cancel)
		t0 := time.Now()
		res, err := e.m.Agent.Bash(ctx, "work", agent.BashOptions{Command: looper("cxl") + "setsid env -i /bin/sh /tmp/lbx-cxl.sh & sleep 1000"})
		took := time.Since(t0)
		t.Logf("the call took %v", took.Round(time.Millisecond))
		if err != nil || !res.Cancelled {
			t.Fatalf("the call: %+v, %v; want cancelled", res, err)
		}
		if took > 7*time.Second {
			t.Errorf("the call took %v, want under 7 s (cancelled at 2 s)", took)
		}
		noLooper(t, e, "cxl")
	}},
	{name: "signals to PID 1", side: "agent", gvisor: true, expect: "TERM, INT, HUP, QUIT, USR1, USR2, ABRT, SEGV, BUS, FPE, SYS, TRAP, PIPE, ALRM, STOP: the sandbox still answers and stays active, and PID 1 is not left stopped (gVisor's PID 1 takes SIGSTOP: the next call continues it)", run: func(t *testing.T, e *attackEnv) {
		for _, sig := range []string{"TERM", "INT", "HUP", "QUIT", "USR1", "USR2", "ABRT", "SEGV", "BUS", "FPE", "SYS", "TRAP", "PIPE", "ALRM", "STOP"} {
			res := bash(t, e.m, "kill -"+sig+" 1; echo sent")
			if res.Stdout != "sent\n" {
				t.Fatalf("kill -%s 1: %+v", sig, res)
			}
			time.Sleep(100 * time.Millisecond)
			if res := bash(t, e.m, "echo alive"); res.Stdout != "alive\n" {
				t.Fatalf("after kill -%s 1 the sandbox answers %+v", sig, res)
			}
			if st := status(t, e, "work"); st != create.StatusActive {
				t.Fatalf("after kill -%s 1 the sandbox is %s", sig, st)
			}
		}
		// The state follows the command's name in /proc/1/stat.
		if res := bash(t, e.m, "sed 's/.*) //' /proc/1/stat | cut -c1"); res.Stdout == "T\n" {
			t.Errorf("PID 1 is left stopped: %+v", res)
		}
	}},
	{name: "background command and a call", side: "agent", gvisor: true, expect: "a background command started before a call, and one started during it, both run after the call ends", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		bash(t, e.m, looper("bg1")+looper("bg2")+"true")
		if _, err := servicectl.Background(ctx, e.m.Repo, "work", "lbx-bg1", agent.BashOptions{Command: "/bin/sh /tmp/lbx-bg1.sh"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			for _, n := range []string{"lbx-bg1", "lbx-bg2"} {
				_, _ = servicectl.Control(context.Background(), e.m.Repo, "work", services.Stop, n)
			}
		})
		bgErr := make(chan error, 1)
		go func() {
			time.Sleep(time.Second)
			_, err := servicectl.Background(ctx, e.m.Repo, "work", "lbx-bg2", agent.BashOptions{Command: "/bin/sh /tmp/lbx-bg2.sh"})
			bgErr <- err
		}()
		bash(t, e.m, "sleep 3")
		if err := <-bgErr; err != nil {
			t.Fatal(err)
		}
		for _, tag := range []string{"bg1", "bg2"} {
			if n := loopers(t, e, tag); n == 0 {
				t.Errorf("background %s was killed by the end of an unrelated call", tag)
			}
		}
	}},
	{name: "an agent reaches for its injected API key: its value, the proxy's control socket, another host, another Host header, another header", side: "agent", expect: "the API gets the key, the body goes as written, the placeholder to another host is refused and counted; a Host header naming another server is refused (421) and counted, and no request reaches the API under that name; the key goes in Authorization alone, so an API quoting X-Echo back shows the placeholder; the value is in no environment, file or inspect the sandbox or the proxy shows, the control socket is out of reach, and a resume gives the proxy the key again", run: func(t *testing.T, e *attackEnv) {
		injectAttack(t, e.image)
	}},
	{name: "an agent in a run session: floods and kills settle, writes .git, leaves processes behind", side: "agent", gvisor: true, expect: "the session ends with the agent's exit status; the final commit takes what /src holds, no .git path; no process of the session outlives it; nothing runs on the host", run: func(t *testing.T, e *attackEnv) {
		runAttack(t, e)
	}},
	{name: "a process named like /proc/PID/stat fields under the idle stop, and the wake", side: "agent", gvisor: true, expect: "PID 1 reads the forged name as a name: the sandbox (idle 10s) stops itself while the process sleeps; the next call starts it again and commits what that call changed, no more; nothing runs on the host", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		napper(t, e, "nap")
		// A script's process is named after its file (15 bytes at most):
		// fields after a ')' that a parser reading up to the first ')'
		// would take for the state, the parent and CPU times.
		forged := "/tmp/) R 0 0 0 99 99"
		script := fmt.Sprintf(`printf '#!/bin/sh\nsleep 600\n' > %q && chmod +x %[1]q && exec %[1]q`, forged)
		if _, err := servicectl.Background(ctx, e.m.Repo, "nap", "forged", agent.BashOptions{Command: script}); err != nil {
			t.Fatal(err)
		}
		res, err := e.m.Agent.Bash(ctx, "nap", agent.BashOptions{Command: "sleep 1; grep -c '^) R 0 0 0 99 99$' /proc/[0-9]*/comm | grep -c ':1$'"})
		if err != nil || res.Stdout != "1\n" {
			t.Fatalf("the forged process is not running: %+v %v", res, err)
		}
		awaitIdle(t, e, "nap")
		sb, err := e.m.Open("nap")
		if err != nil {
			t.Fatal(err)
		}
		res, err = sb.Bash(ctx, agent.BashOptions{Command: "echo woke > woke.txt"})
		if err != nil || res.Snapshot == "" {
			t.Fatalf("the call after the idle stop: %+v %v", res, err)
		}
		if files := testenv.Git(t, e.m.Repo.Root, "show", "--name-only", "--format=", res.Snapshot); files != "woke.txt" {
			t.Errorf("the waking call's commit holds %q, want woke.txt alone", files)
		}
		if st := status(t, e, "nap"); st != create.StatusActive {
			t.Errorf("after the call the sandbox is %s", st)
		}
	}},
}

// looper is shell that writes /tmp/lbx-TAG.sh, a script that runs until
// killed; its processes are the ones whose command line names it.
func looper(tag string) string {
	return fmt.Sprintf("printf 'while :; do /bin/sleep 1; done\\n' > /tmp/lbx-%s.sh; ", tag)
}

// loopers counts the processes running /tmp/lbx-TAG.sh, by a later call
// (the pattern's brackets keep grep from counting itself).
func loopers(t *testing.T, e *attackEnv, tag string) int {
	t.Helper()
	res := bash(t, e.m, fmt.Sprintf("grep -l 'lbx-%s[.]sh' /proc/[0-9]*/cmdline 2>/dev/null | wc -l", tag))
	var n int
	if _, err := fmt.Sscan(strings.TrimSpace(res.Stdout), &n); err != nil {
		t.Fatalf("counting processes: %+v", res)
	}
	return n
}

func noLooper(t *testing.T, e *attackEnv, tag string) {
	t.Helper()
	if n := loopers(t, e, tag); n != 0 {
		t.Errorf("%d process(es) of the call still run after it returned", n)
	}
}

// napper makes sandbox name with an idle stop of 10 s, deleted when the
// test ends.
func napper(t *testing.T, e *attackEnv, name string) {
	t.Helper()
	e.m.Repo.Config.Idle = 10 * time.Second
	_, err := e.m.Create(context.Background(), create.CreateOptions{Name: name})
	e.m.Repo.Config.Idle = 0
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.m.Delete(context.Background(), name, true) })
}

// awaitIdle waits up to a minute for sandbox name (a napper) to be
// stopped for being idle.
func awaitIdle(t *testing.T, e *attackEnv, name string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); status(t, e, name) != create.StatusIdle; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s of idle 10s is %s after a minute", name, status(t, e, name))
		}
	}
}

// status is the sandbox's status as list shows it.
func status(t *testing.T, e *attackEnv, name string) string {
	t.Helper()
	infos, err := e.m.List(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range infos {
		if in.Name == name {
			return in.Status
		}
	}
	t.Fatalf("sandbox %s is not listed", name)
	return ""
}

// runAttack is an agent run by `litterbox run` that turns on what watches
// it: it writes a 100 kB line and garbage into settle's output (the pipe
// the host reads), kills settle, writes .git paths and leaves two
// processes behind (one in a session of its own), then exits 7.
func runAttack(t *testing.T, e *attackEnv) {
	// settle's command line is "HELPER settle 300 2000"; the pattern is
	// split so that the agent's own (this script) does not match it.
	script := `settle() { for p in /proc/[0-9]*; do case "$(tr '\0' ' ' < $p/cmdline 2>/dev/null)" in *" sett""le 300 2000"*) echo ${p#/proc/};; esac; done; }
mkdir -p runrow && cd runrow && echo one > one.txt
i=0; until [ -n "$(settle)" ] || [ $i = 100 ]; do sleep 0.2; i=$((i+1)); done
sleep 1
for pid in $(settle); do
  head -c 100000 /dev/zero | tr '\0' x > /proc/$pid/fd/1; printf '\n\033]52;c;cHdu\007\n' > /proc/$pid/fd/1
  kill -9 $pid && echo killed settle
done
mkdir -p .git/hooks sub/.git && echo 'touch /tmp/pwned' > .git/hooks/post-checkout && echo x > sub/.git/config
sleep 3 # past any commit settle's last line started: two.txt is the final commit's alone
echo two > two.txt
setsid sleep 611 </dev/null >/dev/null 2>&1 &
nohup sleep 612 </dev/null >/dev/null 2>&1 &
exit 7`
	var out strings.Builder
	res, err := e.m.Agent.Run(context.Background(), "work", agent.RunOptions{
		ExecOptions: agent.ExecOptions{Cmd: []string{"sh", "-c", script}, Interactive: true,
			Streams: box.Streams{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out}},
		Quiet: 300 * time.Millisecond, Most: 2 * time.Second,
	})
	if err != nil || res.ExitCode != 7 || len(res.Commits) == 0 {
		t.Fatalf("the session: %+v %v\n%s", res, err, out.String())
	}
	if !strings.Contains(out.String(), "killed settle") {
		t.Fatalf("the agent did not find settle: %s", out.String())
	}
	tip := res.Commits[len(res.Commits)-1]
	if got := testenv.Git(t, e.m.Repo.Root, "ls-tree", "-r", "--name-only", tip, "runrow"); got != "runrow/one.txt\nrunrow/two.txt" {
		t.Errorf("the session's last commit holds %q under runrow/, want one.txt and two.txt alone", got)
	}
	if got := testenv.Git(t, e.m.Repo.Root, "rev-parse", "litterbox/work"); got != tip {
		t.Errorf("the branch is at %s, the session's last commit %s", got, tip)
	}
	if n := exec(t, e.m, "work", "grep -l 'sleep.61[12]' /proc/[0-9]*/cmdline 2>/dev/null | grep -v self | wc -l"); strings.TrimSpace(n) != "0" {
		t.Errorf("%s process(es) the agent left outlived its session", strings.TrimSpace(n))
	}
	bash(t, e.m, "rm -rf runrow")
}
