//go:build integration

package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// A process that keeps channels (litterbox mcp, litterbox run) sends its
// calls over one exec per sandbox, and each call still ends as it would
// over an exec of its own: its output is its own, a cancel, a timeout and
// the environment's secrets work as before, and a channel that broke (its
// helper killed by the agent, the sandbox paused, stopped and started)
// gives way to a new one with nothing lost.
func TestIntegrationChannel(t *testing.T) {
	ctx := context.Background()
	m := realManager(t)
	t.Setenv("LB_CHANNEL_TOKEN", "s3cret-over-the-channel")
	localConfig(t, m, "[secrets]\nTOKEN = { env = \"LB_CHANNEL_TOKEN\" }\n")
	m.Repo.Config.Secrets = map[string]config.SecretSpec{"TOKEN": {Env: "LB_CHANNEL_TOKEN"}}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "ch"}); err != nil {
		t.Fatal(err)
	}
	m.Agent.KeepChannels()
	t.Cleanup(m.Agent.Close)
	counter := &runner.Counter{Inner: testenv.Exec()}
	useRunner(m, runner.Audit{Inner: counter})
	bash := func(t *testing.T, o agent.BashOptions) (string, error) {
		t.Helper()
		res, err := m.Agent.Bash(ctx, "ch", o)
		if err != nil {
			return "", err
		}
		return res.Stdout + res.Stderr, nil
	}
	must := func(t *testing.T, cmd, want string) {
		t.Helper()
		if got, err := bash(t, agent.BashOptions{Command: cmd}); err != nil || got != want {
			t.Fatalf("%s: %q, %v; want %q", cmd, got, err, want)
		}
	}
	serves := func() int {
		n := 0
		for _, c := range counter.Commands() {
			if strings.HasSuffix(strings.Join(c, " "), " serve") {
				n++
			}
		}
		return n
	}

	t.Run("one exec for many calls", func(t *testing.T) {
		counter.Reset()
		for range 3 {
			must(t, "echo hi", "hi\n")
		}
		if n := serves(); n != 1 {
			t.Errorf("%d execs of serve for three calls, want 1: %q", n, counter.Commands())
		}
		if n := counter.Count("docker"); n != 1 {
			t.Errorf("%d docker commands for three calls, want the one exec: %q", n, counter.Commands())
		}
	})
	t.Run("audited as the exec it saved", func(t *testing.T) {
		trail := &runner.Trail{}
		if _, err := m.Agent.Bash(runner.WithTrail(ctx, trail), "ch", agent.BashOptions{Command: "exit 3"}); err != nil {
			t.Fatal(err)
		}
		var shown []string
		for _, c := range trail.Commands() {
			if strings.HasPrefix(c.Line, "docker exec") {
				shown = append(shown, c.Line)
				if !strings.HasSuffix(c.Line, " /bin/sh -c 'exit 3'") || c.ExitCode != 3 || !strings.Contains(c.Note, "carried over the sandbox's kept channel") {
					t.Errorf("%+v", c)
				}
			}
		}
		if len(shown) != 1 {
			t.Errorf("execs in the trail: %q, want the call's", shown)
		}
	})
	t.Run("a call's output is its own", func(t *testing.T) {
		must(t, "(sleep 0.5; echo late) & echo first", "first\n")
		must(t, "sleep 1; echo second", "second\n")
	})
	t.Run("secrets reach the command, masked", func(t *testing.T) {
		must(t, `test "$TOKEN" = s3cret-over-the-channel && echo "$TOKEN" | wc -c`, "24\n")
		must(t, `echo "$TOKEN"`, "***\n")
	})
	t.Run("a cancel ends the call and the channel goes on", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		res, err := m.Agent.Bash(cctx, "ch", agent.BashOptions{Command: "sleep 30"})
		if err != nil || !res.Cancelled || time.Since(start) > 10*time.Second {
			t.Fatalf("%+v %v after %v", res, err, time.Since(start))
		}
		counter.Reset()
		must(t, "echo after", "after\n")
		if n := serves(); n != 0 {
			t.Errorf("a new channel after a cancel: %q", counter.Commands())
		}
	})
	t.Run("a timeout kills the command", func(t *testing.T) {
		res, err := m.Agent.Bash(ctx, "ch", agent.BashOptions{Command: "sleep 30", Timeout: time.Second})
		if err != nil || !res.TimedOut {
			t.Fatalf("%+v %v", res, err)
		}
		must(t, "echo after", "after\n")
	})
	t.Run("the helper killed under a call", func(t *testing.T) {
		_, err := bash(t, agent.BashOptions{Command: "echo kept > killed.txt; kill -9 $(cut -d' ' -f4 /proc/$PPID/stat); sleep 20"})
		if err == nil {
			t.Fatal("the call whose channel died answered")
		}
		t.Logf("the call: %v", err)
		counter.Reset()
		res, err := m.Agent.Bash(ctx, "ch", agent.BashOptions{Command: "cat killed.txt"})
		if err != nil || res.Stdout != "kept\n" || res.Between.Commit == "" {
			t.Fatalf("%+v %v: want the file, committed between calls", res, err)
		}
		if n := serves(); n != 1 {
			t.Errorf("%d new channels, want 1: %q", n, counter.Commands())
		}
		if got := testenv.Git(t, m.Repo.Root, "show", "litterbox/ch:killed.txt"); got != "kept" {
			t.Errorf("branch holds %q", got)
		}
	})
	t.Run("paused under the channel", func(t *testing.T) {
		if _, err := m.Pause(ctx, "ch"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err := bash(t, agent.BashOptions{Command: "true"})
		var nr *agent.NotRunningError
		if !errors.As(err, &nr) || nr.State != "paused" || time.Since(start) > 5*time.Second {
			t.Errorf("%v after %v, want the paused refusal at once", err, time.Since(start))
		}
		if _, err := m.Resume(ctx, "ch"); err != nil {
			t.Fatal(err)
		}
		must(t, "echo resumed", "resumed\n")
	})
	t.Run("stopped and started under the channel", func(t *testing.T) {
		if out, err := testenv.Docker("stop", "-t", "1", m.Repo.Names("ch").Container); err != nil {
			t.Fatal(out, err)
		}
		if _, err := m.Resume(ctx, "ch"); err != nil {
			t.Fatal(err)
		}
		must(t, "echo restarted", "restarted\n")
	})
}
