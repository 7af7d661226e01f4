//go:build integration

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// The host's protection by default: a sandbox leaves the host half a CPU
// (docker inspect shows it), an agent's ninth sandbox of a repository is
// refused while a person may pass the limit, and a sandbox whose memory
// would take the engine's sandboxes past their budget is refused; each
// refusal is one line and makes nothing.
func TestIntegrationHostLimits(t *testing.T) {
	ctx := context.Background()
	// Small sandboxes: other tests' beside them count against the budget.
	m := repoManager(t, testenv.Files{"README.md": "hi\n"}, "[docker]\nmemory = \"64m\"\n[limits]\nmemory-budget = \"75%\"\n")
	for i := 1; i <= 8; i++ {
		c, err := m.Create(ctx, create.CreateOptions{Name: fmt.Sprintf("s%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		if c.Limits.Sandboxes != i || c.Limits.MaxSandboxes != 8 || c.Limits.MemoryBudget == 0 || c.Limits.MemoryInUse < int64(i)*64<<20 {
			t.Fatalf("create %d: limits %+v", i, c.Limits)
		}
	}
	want := strconv.FormatFloat(min(2, max(0.5, float64(runtime.NumCPU())-0.5))*1e9, 'f', 0, 64)
	if got, _ := testenv.Docker("inspect", "--format", "{{.HostConfig.NanoCpus}}", m.Repo.Names("s1").Container); got != want {
		t.Errorf("NanoCpus %s, want %s: the host keeps half a CPU", got, want)
	}
	_, err := m.Create(ctx, create.CreateOptions{Name: "ninth"})
	var le *create.LimitError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "this repository has 8 sandboxes (s1, s2,") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a ninth sandbox: %v", err)
	}
	refusedCleanly(t, m, "ninth")
	if c, err := m.Create(ctx, create.CreateOptions{Name: "ninth", OverLimit: true}); err != nil || c.Limits.Sandboxes != 9 {
		t.Fatalf("a person's ninth sandbox: %+v %v", c, err)
	}

	writeFile(t, m.Repo.Root+"/.litterbox.local.toml", "[docker]\nmemory = \"64g\"\n[limits]\nmemory-budget = \"75%\"\n")
	_, err = m.Create(ctx, create.CreateOptions{Name: "big", OverLimit: true})
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "memory budget: this sandbox's 64.0 GiB would bring") || !strings.Contains(err.Error(), `memory-budget = "75%"`) {
		t.Fatalf("past the memory budget: %v", err)
	}
	refusedCleanly(t, m, "big")
	// The refusal names this repository's sandboxes alone.
	if !strings.Contains(err.Error(), "they are: ninth (64.0 MiB), s1 (64.0 MiB), s2 (64.0 MiB),") {
		t.Errorf("the refusal does not name the repository's sandboxes: %v", err)
	}
	list, err := m.List(ctx, false)
	if err != nil || len(list) != 9 || list[0].Limits == nil || list[0].Limits.Memory != "64m" {
		t.Fatalf("list: %+v %v", list, err)
	}
}

// The budget counts one repository's sandboxes, and no warm pool entry:
// another repository's sandboxes, whose limits add up past the budget
// (their memory reserved, not used), and a filled pool of this one, do
// not refuse a create; this repository's own do, naming only them.
func TestIntegrationBudgetCountsOneRepository(t *testing.T) {
	ctx := context.Background()
	// Each limit alone fits a budget of 1 GiB; two do not.
	local := "[docker]\nmemory = \"700m\"\n[limits]\nmemory-budget = \"1g\"\n"
	other := repoManager(t, testenv.Files{"README.md": "other\n"}, local)
	if _, err := other.Create(ctx, create.CreateOptions{Name: "theirs"}); err != nil {
		t.Fatal(err)
	}
	m := repoManager(t, testenv.Files{"README.md": "mine\n"}, local+"[pool]\nsize = 1\n")
	if _, err := m.Creator.FillPool(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := m.Create(ctx, create.CreateOptions{Name: "mine"})
	if err != nil {
		t.Fatalf("another repository's sandbox, or the pool, refused a create: %v", err)
	}
	if c.Limits.MemoryInUse != 700<<20 {
		t.Errorf("memory counted %d, want this sandbox's 700 MiB alone", c.Limits.MemoryInUse)
	}
	_, err = m.Create(ctx, create.CreateOptions{Name: "second"})
	var le *create.LimitError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "they are: mine (700.0 MiB);") || strings.Contains(err.Error(), "theirs") {
		t.Fatalf("a second sandbox of this repository: %v", err)
	}
	refusedCleanly(t, m, "second")
}

// [limits] idle: PID 1 stops a sandbox that had no call and used no CPU for
// that long; list says so, and the next call starts it again with its
// files, as does a person's exec, and a resume that no call follows stops
// again.
func TestIntegrationIdleStop(t *testing.T) {
	ctx := context.Background()
	m := repoManager(t, testenv.Files{"README.md": "hi\n", ".litterbox.toml": "[limits]\nidle = \"10s\"\n"}, "")
	c, err := m.Create(ctx, create.CreateOptions{Name: "nap"})
	if err != nil || c.Limits.Idle != "10s" {
		t.Fatalf("create: %+v %v", c, err)
	}
	if _, err := m.Agent.Write(ctx, "nap", "kept.txt", []byte("kept\n")); err != nil {
		t.Fatal(err)
	}
	waitIdle := func() {
		t.Helper()
		for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(time.Second) {
			list, err := m.List(ctx, false)
			if err == nil && len(list) == 1 && list[0].Status == create.StatusIdle {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("not stopped for being idle 40 s on: %+v %v", list, err)
			}
		}
	}
	waitIdle()
	if _, err := m.Agent.Bash(ctx, "nap", agent.BashOptions{Command: "echo lost > lost.txt"}); !errors.As(err, new(*agent.IdleError)) {
		t.Fatalf("the agent's call after the idle stop: %v, want an IdleError", err)
	}
	sb, err := m.Open("nap")
	if err != nil {
		t.Fatal(err)
	}
	res, err := sb.Bash(ctx, agent.BashOptions{Command: "cat kept.txt; echo again > again.txt"})
	if err != nil || res.Stdout != "kept\n" || res.Snapshot == "" {
		t.Fatalf("the call after the idle stop: %+v %v", res, err)
	}
	if list, _ := m.List(ctx, false); list[0].Status != create.StatusActive {
		t.Fatalf("after the call: %s", list[0].Status)
	}
	waitIdle()
	if out := exec(t, m, "nap", "cat again.txt"); out != "again\n" {
		t.Fatalf("a person's exec after the idle stop: %q", out)
	}
	// A resume that no call follows starts the idle clock itself (PID 1
	// counts from the first question it is asked).
	waitIdle()
	if o, err := m.Resume(ctx, "nap"); err != nil || o.Status != create.StatusActive {
		t.Fatalf("resume after the idle stop: %+v %v", o, err)
	}
	waitIdle()
}
