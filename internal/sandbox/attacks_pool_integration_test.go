//go:build integration

package sandbox

import (
	"context"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// poolAttacks are the warm pool's rows: a box made ahead must never carry
// a looser config than the one a create asks for, nor anything of an
// earlier sandbox.
var poolAttacks = []attack{
	{name: "pool entry made before the config was tightened", side: "repo", expect: "the entry (on a network) is stale and never claimed: the create makes a box with no network", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := freshRepo(t, e, "")
		r.Repo.Config.PoolSize, r.Repo.Config.Network = 1, "bridge"
		st, err := r.Creator.FillPool(ctx)
		if err != nil || len(st.Ready) != 1 {
			t.Fatalf("fill: %+v %v", st, err)
		}
		loose := st.Ready[0]
		r.Repo.Config.Network = "none"
		if _, err := r.Create(ctx, create.CreateOptions{Name: "tight"}); err != nil {
			t.Fatal(err)
		}
		if p := r.Repo.Names("tight").Pool; p != "" {
			t.Fatalf("the create claimed %s, made for network bridge", p)
		}
		if mode, _ := testenv.Docker("inspect", "--format", "{{.HostConfig.NetworkMode}}", r.Repo.Names("tight").Container); mode != "none" {
			t.Fatalf("the sandbox's network is %q", mode)
		}
		if out, _ := testenv.Docker("ps", "-q", "--filter", "name=^"+loose+"$"); out == "" {
			t.Fatal("the loose entry is gone: the create should have left it to the next fill")
		}
	}},
	{name: "leftovers in a pooled sandbox for the next one", side: "agent", expect: "nothing of a deleted pooled sandbox (files in /tmp, $HOME, /src, a process left running) is in the next sandbox from the pool: entries are never reused", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := freshRepo(t, e, "")
		r.Repo.Config.PoolSize = 1
		for _, name := range []string{"first", "second"} {
			if st, err := r.Creator.FillPool(ctx); err != nil || len(st.Ready) != 1 {
				t.Fatalf("fill: %+v %v", st, err)
			}
			createPooled(t, r, name)
			if name == "second" {
				break
			}
			res, err := r.Agent.Bash(ctx, name, agent.BashOptions{Command: "echo planted > /tmp/planted; echo planted > $HOME/planted; echo planted > /src/.planted; echo ok"})
			if err != nil || res.Stdout != "ok\n" {
				t.Fatalf("planting: %+v %v", res, err)
			}
			// A process that outlives the call: a background command.
			if _, err := servicectl.Background(ctx, r.Repo, name, "planted", agent.BashOptions{Command: "exec sleep 600"}); err != nil {
				t.Fatal(err)
			}
			if ps := procs(t, r, name); !strings.Contains(ps, "sleep 600") {
				t.Fatalf("the planted process does not run:\n%s", ps)
			}
			if _, err := r.Delete(ctx, name, true); err != nil {
				t.Fatal(err)
			}
		}
		res, err := r.Agent.Bash(ctx, "second", agent.BashOptions{Command: "cat /tmp/planted $HOME/planted /src/.planted 2>&1; true"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Stdout, "planted\n") {
			t.Fatalf("the next pooled sandbox holds the first one's files:\n%s", res.Stdout)
		}
		if ps := procs(t, r, "second"); strings.Contains(ps, "sleep 600") {
			t.Fatalf("the next pooled sandbox runs the first one's process:\n%s", ps)
		}
	}},
}

// procs is every process's command line in sandbox name, from /proc (the
// Debian image has no ps).
func procs(t *testing.T, m *Manager, name string) string {
	t.Helper()
	res, err := m.Agent.Bash(context.Background(), name, agent.BashOptions{Command: "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null; true"})
	if err != nil {
		t.Fatal(err)
	}
	return res.Stdout
}
