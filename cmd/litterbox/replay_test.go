package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// replayProgram is a program whose commands come from testdata/<name>.json,
// or, with -record, from the real engine and a real repository
// (re-recording the transcript). It returns the program and the repository
// to pass as --repo.
func replayProgram(t *testing.T, name string) (*cli.Program, string) {
	t.Helper()
	t.Setenv("DOCKER_HOST", "")
	t.Setenv("NO_COLOR", "")
	dir := testenv.ReplayRepo(t, "clirepo")
	if err := layout.PinRepoID(filepath.Join(dir, ".git"), "c11e0001"); err != nil {
		t.Fatal(err)
	}
	p := cli.NewProgram(strings.NewReader(""), nil, nil)
	p.Inner = testenv.Transcript(t, filepath.Join("testdata", name+".json"), runner.Subst{dir: "$REPO"})
	p.Opened = func(m *sandbox.Manager) {
		m.Agent.PinHelper(testenv.ReplayHelper(t), "replay")
		m.Repo.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
		m.Repo.Config.CPUs = "2"
	}
	return p, dir
}

// The lifecycle as a user types it, over a transcript of a real engine:
// the table and JSON of list, the one-line results of each command and
// their exit codes.
func TestReplayCLILifecycle(t *testing.T) {
	p, repo := replayProgram(t, "cli-lifecycle")
	run := func(want int, args ...string) invocation {
		t.Helper()
		got := invoke(t, p, append([]string{"--repo", repo}, args...)...)
		if got.code != want {
			t.Fatalf("litterbox %s: exit %d, want %d\nstdout %s\nstderr %s", strings.Join(args, " "), got.code, want, got.stdout, got.stderr)
		}
		return got
	}

	if got := run(0, "list"); got.stdout != "No sandboxes.\n" || got.stderr != "" {
		t.Errorf("empty list: %+v", got)
	}
	if got := run(0, "list", "--json"); got.stdout != "[]\n" {
		t.Errorf("empty list --json: %q", got.stdout)
	}
	created := run(0, "create", "box")
	if !strings.Contains(created.stdout, "litterbox/box") {
		t.Errorf("create: %+v", created)
	}
	table := run(0, "list")
	if !regexp.MustCompile(`^NAME +STATUS +OWNER +AGE +IDLE +BRANCH +AHEAD +PORTS\nbox +active +cli \(\d+\) +\S+ +\d+s +litterbox/box +0 +-\n$`).MatchString(table.stdout) {
		t.Errorf("list table:\n%s", table.stdout)
	}
	if strings.Contains(table.stdout, "\x1b[") {
		t.Error("colour written to a buffer")
	}
	js := run(0, "list", "--json")
	if !strings.Contains(js.stdout, `"name": "box",`) || !strings.Contains(js.stdout, `"status": "active",`) || !strings.Contains(js.stdout, `"repo": "`+repo+`",`) || !strings.HasPrefix(js.stdout, "[\n  {") {
		t.Errorf("list --json: %s", js.stdout)
	}
	if got := run(0, "pause", "box"); got.stdout != "Paused sandbox 'box'.\n" {
		t.Errorf("pause: %+v", got)
	}
	if got := run(0, "pause", "box"); !strings.Contains(got.stdout+got.stderr, "already paused") {
		t.Errorf("second pause: %+v", got)
	}
	if got := run(0, "list"); !regexp.MustCompile(`\nbox +paused `).MatchString(got.stdout) {
		t.Errorf("list after pause:\n%s", got.stdout)
	}
	run(0, "resume", "box")
	if got := run(1, "pause", "nope"); got.stderr != "Error: Sandbox 'nope' not found: this repository has box.\n" {
		t.Errorf("unknown sandbox: %q", got.stderr)
	}
	if got := run(0, "delete", "box", "--force"); !strings.Contains(got.stdout, "box") {
		t.Errorf("delete: %+v", got)
	}
}
