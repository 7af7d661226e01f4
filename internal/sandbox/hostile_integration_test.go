//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// Hostile input: names and paths an agent (or a prompt injection) might send.
// Each is refused with one line, or handled, and never touches the host.
func TestIntegrationHostileNamesAndPaths(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")

	// Shell metacharacters in a name are slugified away, never run.
	c, err := m.Create(ctx, create.CreateOptions{Name: "$(touch /tmp/lb-pwned); `id` | x"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "touch-tmp-lb-pwned-id-x" {
		t.Fatalf("slug %q", c.Name)
	}
	for _, bad := range []string{"", "!!!", strings.Repeat("a", 64), "\x00"} {
		if _, err := m.Create(ctx, create.CreateOptions{Name: bad}); err == nil {
			t.Errorf("create %q succeeded", bad)
		}
	}

	long := strings.Repeat("d/", 2100) + "f"
	for _, tc := range []struct{ path, want string }{
		{"a\x00b", "NUL"},
		{"line\nbreak.txt", "line break"},
		{long, "at most 4096"},
		{"", "empty"},
	} {
		if _, err := m.Agent.Write(ctx, c.Name, tc.path, []byte("x")); err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("write %.40q: %v, want one line about %s", tc.path, err, tc.want)
		}
		if _, err := m.Agent.Read(ctx, c.Name, tc.path, 0, 0); err == nil {
			t.Errorf("read %.40q succeeded", tc.path)
		}
	}
	// ".." resolves inside the container: /etc is read-only there, and the
	// host's /etc is never reachable.
	res, err := m.Agent.Write(ctx, c.Name, "../../etc/litterbox-escape", []byte("x"))
	if err == nil && res.ExitCode == 0 {
		t.Errorf("writing ../../etc succeeded: %+v", res)
	}
	if _, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "true", Workdir: "/src/\x00"}); err == nil {
		t.Error("a NUL in workdir was accepted")
	}
	// A path of 255-byte components within PATH_MAX is a fine file name.
	deep := strings.Repeat(strings.Repeat("n", 200)+"/", 3) + "f.txt"
	w, err := m.Agent.Write(ctx, c.Name, deep, []byte("deep\n"))
	if err != nil || w.Snapshot == "" {
		t.Fatalf("deep path: %+v %v", w, err)
	}
	if got := testenv.Git(t, m.Repo.Root, "show", c.Branch+":"+deep); got != "deep" {
		t.Fatalf("deep file on the branch: %q", got)
	}
	if testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD") != head {
		t.Fatal("the host's HEAD moved")
	}
}

// Large and binary content: a write over the limit is refused before it is
// sent; binary files are committed byte for byte.
func TestIntegrationHugeAndBinaryContent(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	c, err := m.Create(ctx, create.CreateOptions{Name: "big"})
	if err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	huge := make([]byte, 100<<20)
	if _, err := m.Agent.Write(ctx, c.Name, "huge.bin", huge); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Fatalf("100 MiB write: %v", err)
	}
	huge = nil
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	// The refusal copied nothing: the heap grew by the caller's buffer at most.
	if grew := int64(after.TotalAlloc) - int64(before.TotalAlloc); grew > 110<<20 {
		t.Errorf("refusing 100 MiB allocated %d MiB", grew>>20)
	}

	bin := make([]byte, 1<<20)
	if _, err := rand.Read(bin); err != nil {
		t.Fatal(err)
	}
	bin[0], bin[1] = 0, 0xff
	w, err := m.Agent.Write(ctx, c.Name, "blob.bin", bin)
	if err != nil || w.Snapshot == "" {
		t.Fatalf("binary write: %+v %v", w, err)
	}
	got, err := m.Repo.Git.CatBlob(ctx, testenv.Git(t, m.Repo.Root, "rev-parse", c.Branch+":blob.bin"))
	if err != nil || !bytes.Equal(got, bin) {
		t.Fatalf("binary file on the branch differs (%d bytes, %v)", len(got), err)
	}
	// bash can still make files of any size; they are committed too.
	res, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "head -c 3000000 /dev/urandom > made.bin"})
	if err != nil || res.Snapshot == "" {
		t.Fatalf("bash-made binary: %+v %v", res, err)
	}
}

// A command that prints 1 GiB is capped, and the sandbox answers at once
// afterwards; a fork bomb hits the pids limit and the sandbox survives it.
func TestIntegrationFloodAndForkBomb(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	m.Repo.Config.PidsLimit = 128
	c, err := m.Create(ctx, create.CreateOptions{Name: "flood"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "head -c 1073741824 /dev/zero | tr '\\0' x; echo done >&2"})
	if err != nil {
		t.Fatal(err)
	}
	limit := config.Default().OutputLimit
	if res.StdoutCut != (1<<30)-limit || res.Stderr != "done\n" || !strings.Contains(res.Stdout, "its first 32 MiB are in "+res.StdoutLog) {
		t.Fatalf("1 GiB: kept %d, cut %d, stderr %q", len(res.Stdout), res.StdoutCut, res.Stderr)
	}
	// The saved stream stops at 32 MiB: /tmp is memory.
	if got := exec(t, m, c.Name, "wc -c < "+res.StdoutLog); strings.TrimSpace(got) != strconv.Itoa(32<<20) {
		t.Errorf("saved %s bytes of 1 GiB", strings.TrimSpace(got))
	}
	t.Logf("1 GiB of output took %v", time.Since(start))
	if out := exec(t, m, c.Name, "echo alive"); out != "alive\n" {
		t.Fatalf("after the flood: %q", out)
	}

	start = time.Now()
	bomb, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "bomb() { bomb | bomb & }; bomb; sleep 2", Timeout: 10 * time.Second})
	if err != nil {
		st, _ := testenv.Docker("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}} {{.State.OOMKilled}}", c.Container)
		logs, _ := testenv.Docker("logs", c.Container)
		t.Fatalf("%v\nstate %s\nlogs %s", err, st, logs)
	}
	t.Logf("fork bomb: exit %d, timed out %v, after %v", bomb.ExitCode, bomb.TimedOut, time.Since(start))
	if pids, err := testenv.Docker("inspect", "--format", "{{.HostConfig.PidsLimit}}", c.Container); err != nil || pids != "128" {
		t.Fatalf("pids limit %q %v", pids, err)
	}
	// Everything the bomb started is gone, and the sandbox works.
	// PID 1, its sleep, and the exec's own sh and ps are all that may run.
	if n, _ := strconv.Atoi(strings.TrimSpace(exec(t, m, c.Name, "ps -o pid | tail -n +2 | wc -l"))); n > 6 {
		t.Errorf("%d processes left after the bomb:\n%s", n, exec(t, m, c.Name, "ps"))
	}
	if out := exec(t, m, c.Name, "echo alive"); out != "alive\n" {
		t.Fatalf("after the fork bomb: %q", out)
	}
}

// PID 1 outlives fork bombs: a Go program that cannot get a new thread
// dies, and PID 1's death stops the sandbox. Before PID 1 kept threads in
// reserve, 3 of 20 fresh sandboxes stopped this way, the call failing
// with "sandbox helper exited with code 137"; six give a fair chance to
// see it come back.
func TestIntegrationForkBombKeepsInit(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	m.Repo.Config.PidsLimit = 128
	for i := range 6 {
		c, err := m.Create(ctx, create.CreateOptions{Name: fmt.Sprint("keep", i)})
		if err != nil {
			t.Fatal(err)
		}
		// Streamed, as litterbox exec --timeout does: that kept PID 1 busiest.
		_, bashErr := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "bomb() { bomb | bomb & }; bomb; sleep 2", Timeout: 10 * time.Second, Output: &agent.Output{Stdout: io.Discard, Stderr: io.Discard}})
		st, err := testenv.Docker("inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", c.Container)
		if err != nil || st != "running 0" {
			logs, _ := testenv.Docker("logs", c.Container)
			t.Fatalf("sandbox %d after a fork bomb (%v): %s %v\n%s", i, bashErr, st, err, logs)
		}
		if _, err := m.Delete(ctx, c.Name, true); err != nil {
			t.Fatal(err)
		}
	}
}

// A sandbox that stops under a call (its PID 1 killed) says so, with the
// command that starts it again; what the call wrote is committed by the
// first call after the resume.
func TestIntegrationStoppedDuringCall(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	c, err := m.Create(ctx, create.CreateOptions{Name: "dies"})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(time.Second)
		_, _ = testenv.Docker("kill", c.Container)
	}()
	_, err = m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "echo before > kept.txt; sleep 30"})
	var ended *agent.EndedError
	if !errors.As(err, &ended) || ended.ExitCode != 137 || !strings.Contains(err.Error(), "ended during the call") || !strings.Contains(err.Error(), "litterbox resume dies") {
		t.Fatalf("error %v", err)
	}
	if _, err := m.Resume(ctx, c.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Git(t, m.Repo.Root, "show", c.Branch+":kept.txt"); got != "before" {
		t.Errorf("kept.txt on the branch: %q", got)
	}
}
