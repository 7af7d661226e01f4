package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/milestone"
	"github.com/litterbox-dev/litterbox/internal/ports"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/services"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/internal/textedit"
	"github.com/litterbox-dev/litterbox/runner"
)

// replayRepo returns a Manager whose commands come from testdata/<name>.json,
// or, with -record, from the real engine and a real repository (re-recording
// the transcript). The repo is always called "replayrepo" so container names
// match between the two modes.
func replayManager(t *testing.T, name string) *Manager {
	t.Helper()
	// The engine's address is asked of docker, not taken from the machine.
	t.Setenv("DOCKER_HOST", "")
	dir := testenv.ReplayRepo(t, "replayrepo")
	r := testenv.Transcript(t, filepath.Join("testdata", name+".json"), runner.Subst{dir: "$REPO"})
	if err := layout.PinRepoID(filepath.Join(dir, ".git"), replayID); err != nil {
		t.Fatal(err)
	}
	m, err := Open(context.Background(), r, engine.Docker, dir, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	// Fixed so replays do not depend on the machine that recorded them.
	m.Repo.Config.CPUs = "2"
	m.Agent.PinHelper(testenv.ReplayHelper(t), "replay")
	m.Repo.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	return m
}

// replayID is the repository id of every replay test, so that container
// names match the transcripts.
const replayID = "5eed1d00"

// TestReplayLifecycle walks create, list, pause, resume and delete, with their
// idempotent and refused cases, over a transcript of a real engine.
func TestReplayLifecycle(t *testing.T) {
	ctx := context.Background()
	m := replayManager(t, "lifecycle")

	c, err := m.Create(ctx, create.CreateOptions{Name: "My Feature Name!@#"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "my-feature-name" || c.Branch != "litterbox/my-feature-name" || c.Container != "litterbox-replayrepo-"+replayID+"-my-feature-name" {
		t.Errorf("created %+v", c)
	}
	if c.Status != create.StatusActive || c.Setup.ExitCode != 0 || c.Setup.Stdout != "hello world\n" || len(c.Warnings) != 0 {
		t.Errorf("created %+v", c)
	}

	if _, err := m.Create(ctx, create.CreateOptions{Name: "my-feature-name"}); !errorAs[*create.ExistsError](err) {
		t.Errorf("second create: %v, want create.ExistsError", err)
	}

	list, err := m.List(ctx, false)
	if err != nil || len(list) != 1 || list[0].Status != create.StatusActive || list[0].Base != c.Base {
		t.Fatalf("list: %+v %v", list, err)
	}

	steps := []struct {
		op      func(context.Context, string) (Outcome, error)
		changed bool
		status  string
	}{
		{m.Pause, true, create.StatusPaused},
		{m.Pause, false, create.StatusPaused},
		{m.Resume, true, create.StatusActive},
		{m.Resume, false, create.StatusActive},
	}
	for i, s := range steps {
		o, err := s.op(ctx, "my-feature-name")
		if err != nil || o.Changed != s.changed || o.Status != s.status {
			t.Errorf("step %d: %+v %v", i, o, err)
		}
	}

	if _, err := m.Delete(ctx, "my-feature-name", false); !errorAs[*ActiveError](err) {
		t.Errorf("delete of active sandbox: %v, want ActiveError", err)
	}
	d, err := m.Delete(ctx, "my-feature-name", true)
	if err != nil || d.BranchTip != c.Base {
		t.Errorf("forced delete: %+v %v", d, err)
	}
	if _, err := m.Delete(ctx, "my-feature-name", true); !errorAs[*hostrepo.NotFoundError](err) {
		t.Errorf("delete after delete: %v, want NotFoundError", err)
	}
	if _, err := m.Pause(ctx, "my-feature-name"); !errorAs[*hostrepo.NotFoundError](err) {
		t.Errorf("pause of deleted: %v, want NotFoundError", err)
	}
	if list, err := m.List(ctx, false); err != nil || len(list) != 0 {
		t.Errorf("list after delete: %+v %v", list, err)
	}
}

// TestReplayCreateRollsBackOnCopyFailure replays a create whose docker cp
// fails, and checks every resource made before it is removed again.
func TestReplayCreateRollsBackOnCopyFailure(t *testing.T) {
	ctx := context.Background()
	m := replayManager(t, "create-rollback")
	fault := &runner.Fault{Inner: m.Repo.Git.Runner, Match: "docker cp", N: 1}
	m.Repo.Git.Runner = fault
	m.Repo.Provider = providerWith(m, fault)

	_, err := m.Create(ctx, create.CreateOptions{Name: "doomed"})
	var se *hostrepo.StepError
	if !errors.As(err, &se) || len(se.Left) != 0 {
		t.Fatalf("create: %v, want a StepError with nothing left", err)
	}
	if !fault.Fired() {
		t.Fatal("fault never fired")
	}
	if rec, _ := m.Repo.Store().Load("doomed"); rec != nil {
		t.Errorf("state left behind: %+v", rec)
	}
}

func errorAs[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}

// TestReplayServicesAndPorts creates a sandbox from a config with a named
// port and an httpd service, then drives the service through every action,
// a pause and an engine-style stop followed by resume.
func TestReplayServicesAndPorts(t *testing.T) {
	ctx := context.Background()
	m := replayManager(t, "services")
	m.Repo.Config.Network = "bridge"
	m.Repo.Config.Ports = []config.PortSpec{{Name: "www", Target: 8080}}
	m.Repo.Config.Services = map[string]config.ServiceSpec{
		"web":  {Command: []string{"busybox", "httpd", "-f", "-p", "8080", "-h", "/src"}, Stop: "TERM", StopTimeout: 10, Restart: "HUP"},
		"oops": {Command: []string{"no-such-program"}, Stop: "TERM", StopTimeout: 10},
	}
	// Ports from a fixed place in the range, and taken as free, so the
	// argv is the same in every replay.
	m.Creator.PortStart = func(int) int { return 4321 - ports.RangeLow }
	m.Creator.PortFree = func(int) bool { return true }

	c, err := m.Create(ctx, create.CreateOptions{Name: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	wantPort := ports.Port{Name: "www", ContainerPort: 8080, HostPort: 4321, Env: []string{"LITTERBOX_FWD_PORT_WWW", "PORT_WWW"}, Address: "127.0.0.1:4321"}
	if len(c.Ports) != 1 || !reflect.DeepEqual(c.Ports[0], wantPort) {
		t.Errorf("ports %+v, want %+v", c.Ports, wantPort)
	}
	if c.Network != "bridge" || len(c.Services) != 2 || c.Services[0].Name != "oops" || c.Services[0].State != services.Exited ||
		c.Services[1].Name != "web" || c.Services[1].State != services.Running || c.Services[1].PID == 0 {
		t.Errorf("created %+v", c)
	}
	// A service that dies at once is reported, with its log, as a warning.
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], `service "oops" is exited (exit code 127)`) || !strings.Contains(c.Warnings[0], "no-such-program") {
		t.Errorf("warnings %q", c.Warnings)
	}
	if ports, err := m.Ports(ctx, "svc"); err != nil || !reflect.DeepEqual(ports, c.Ports) {
		t.Errorf("Ports: %+v %v", ports, err)
	}
	if list, err := m.List(ctx, false); err != nil || len(list) != 1 || !reflect.DeepEqual(list[0].Ports, c.Ports) {
		t.Errorf("list: %+v %v", list, err)
	}

	expect := func(action, service, state string) services.State {
		t.Helper()
		states, err := servicectl.Control(ctx, m.Repo, "svc", action, service)
		if err != nil || len(states) != 1 || states[0].State != state {
			t.Fatalf("%s %s: %+v %v, want %s", action, service, states, err, state)
		}
		return states[0]
	}
	running := expect(services.Status, "web", services.Running)
	stopped := expect(services.Stop, "web", services.Stopped)
	if stopped.ExitCode == nil || *stopped.ExitCode != 143 {
		t.Errorf("stopped %+v, want exit code 143 (SIGTERM)", stopped)
	}
	started := expect(services.Start, "web", services.Running)
	if started.PID == running.PID {
		t.Errorf("start kept pid %d", started.PID)
	}
	// web has a restart signal: the same process reloads.
	if restarted := expect(services.Restart, "web", services.Running); restarted.PID != started.PID {
		t.Errorf("restart with SIGHUP changed pid %d -> %d", started.PID, restarted.PID)
	}
	if _, err := servicectl.Control(ctx, m.Repo, "svc", services.Start, "oops"); err == nil || !strings.Contains(err.Error(), "exit code 127") {
		t.Errorf("start of a broken service: %v", err)
	}
	if _, err := servicectl.Control(ctx, m.Repo, "svc", services.Stop, "nope"); err == nil || !strings.Contains(err.Error(), "no service \"nope\"") {
		t.Errorf("unknown service: %v", err)
	}
	if _, err := servicectl.Control(ctx, m.Repo, "svc", "reload", "web"); err == nil || !strings.Contains(err.Error(), "unknown service action") {
		t.Errorf("unknown action: %v", err)
	}

	if _, err := m.Pause(ctx, "svc"); err != nil {
		t.Fatal(err)
	}
	if _, err := servicectl.Control(ctx, m.Repo, "svc", services.Status, "web"); err == nil || !strings.Contains(err.Error(), "paused") {
		t.Errorf("status while paused: %v", err)
	}
	if _, err := m.Resume(ctx, "svc"); err != nil {
		t.Fatal(err)
	}
	if s := expect(services.Status, "web", services.Running); s.PID != started.PID {
		t.Errorf("pause/resume changed pid %d -> %d", started.PID, s.PID)
	}

	// What an engine restart leaves: a stopped container. resume starts it
	// and its services again.
	if _, err := m.Repo.Git.Runner.Run(ctx, runner.Cmd{Name: "docker", Args: []string{"stop", "-t", "1", c.Container}}); err != nil {
		t.Fatal(err)
	}
	o, err := m.Resume(ctx, "svc")
	if err != nil || !strings.Contains(o.Message, "Started stopped sandbox") || !strings.Contains(o.Message, "oops") {
		t.Errorf("resume of stopped: %+v %v", o, err)
	}
	expect(services.Status, "web", services.Running)
	// /tmp is a tmpfs: the logs start again with the container.
	var logs strings.Builder
	if err := servicectl.Logs(ctx, m.Repo, "svc", "oops", 0, false, &logs); err != nil || strings.Count(logs.String(), "starting oops") != 1 {
		t.Errorf("logs of oops: %q %v", logs.String(), err)
	}
	if _, err := m.Delete(ctx, "svc", true); err != nil {
		t.Fatal(err)
	}
}

// TestReplayCreateWithoutFreePort: when every host port is taken, create
// says so and leaves nothing behind.
func TestReplayCreateWithoutFreePort(t *testing.T) {
	ctx := context.Background()
	m := replayManager(t, "no-free-port")
	m.Repo.Config.Network = "bridge"
	m.Repo.Config.Ports = []config.PortSpec{{Name: "www", Target: 8080}}
	m.Creator.PortFree = func(int) bool { return false }
	_, err := m.Create(ctx, create.CreateOptions{Name: "portless"})
	if !errorAs[*ports.NoFreeError](err) || !strings.Contains(err.Error(), `no free host port in 3000-8000 for port "www"`) {
		t.Fatalf("create: %v, want ports.NoFreeError", err)
	}
	if rec, _ := m.Repo.Store().Load("portless"); rec != nil {
		t.Errorf("state left behind: %+v", rec)
	}
	if refs, err := m.Repo.Git.ListRefs(ctx, "refs/heads/litterbox/"); err != nil || len(refs) != 0 {
		t.Errorf("branches left behind: %+v %v", refs, err)
	}
}

// TestCreateRefusesBadConfigBeforeAnything: a broken config file fails create
// before a single command runs (the empty transcript refuses any).
func TestCreateRefusesBadConfigBeforeAnything(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "replayrepo")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	m := New(&hostrepo.Repo{Root: dir, GitDir: filepath.Join(dir, ".git"), RepoSlug: "replayrepo", Config: config.Default(), FromFiles: true, Now: time.Now})
	r := &runner.Replayer{}
	m.Repo.Git = gitcli.New(dir, r)
	m.Repo.Provider = engine.Docker.Provider(r)
	if err := os.WriteFile(filepath.Join(dir, config.File), []byte("[[ports]]\nname = \"www\"\ntarget = 70000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := m.Create(context.Background(), create.CreateOptions{Name: "x"})
	if err == nil || err.Error() != ".litterbox.toml, line 3, key ports.target: port 70000 is out of range 1-65535" {
		t.Fatalf("create: %v", err)
	}
}

// TestReplayChanges walks the change loop over a transcript of a real
// engine: a write; a bash that adds, changes, deletes and ignores files; a
// multi-edit; a patch that deletes a file; a milestone; an apply onto the
// user's branch. After each, the branch holds what the sandbox has.
func TestReplayChanges(t *testing.T) {
	ctx := context.Background()
	m := replayManager(t, "changes")
	c, err := m.Create(ctx, create.CreateOptions{Name: "work"})
	if err != nil {
		t.Fatal(err)
	}
	onBranch := func(path string) string {
		t.Helper()
		out, err := m.Repo.Git.Output(ctx, "cat-file", "-p", c.Branch+":"+path)
		if err != nil {
			return "(missing)"
		}
		return out + "\n" // Output trims the last newline
	}

	w, err := m.Agent.Write(ctx, c.Name, "notes/todo.txt", []byte("one\ntwo\nthree\n"))
	if err != nil || w.Snapshot == "" || onBranch("notes/todo.txt") != "one\ntwo\nthree\n" {
		t.Fatalf("write: %+v %v; on the branch %q", w, err, onBranch("notes/todo.txt"))
	}

	b, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "echo made > made.txt && echo changed >> src/main.go && rm README.md && echo '*.log' >> .gitignore && echo noise > build.log && echo out"})
	if err != nil || b.ExitCode != 0 || b.Stdout != "out\n" || b.Snapshot == "" {
		t.Fatalf("bash: %+v %v", b, err)
	}
	for path, want := range map[string]string{"made.txt": "made\n", "src/main.go": "package main\n\nfunc main() {}\nchanged\n", "README.md": "(missing)", "build.log": "(missing)", ".gitignore": "node_modules/\n*.log\n"} {
		if got := onBranch(path); got != want {
			t.Errorf("after bash, %s on the branch: %q, want %q", path, got, want)
		}
	}

	e, err := m.Agent.Edit(ctx, c.Name, "notes/todo.txt", []textedit.Op{{Old: "one", New: "1"}, {Old: "three", New: "3"}})
	if err != nil || e.Edits != 2 || e.Snapshot == "" || onBranch("notes/todo.txt") != "1\ntwo\n3\n" {
		t.Fatalf("edit: %+v %v; on the branch %q", e, err, onBranch("notes/todo.txt"))
	}

	p, err := m.Agent.Patch(ctx, c.Name, "made.txt", "--- a/made.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-made\n")
	if err != nil || !p.Deleted || p.Snapshot == "" || onBranch("made.txt") != "(missing)" {
		t.Fatalf("patch: %+v %v", p, err)
	}

	// Nothing changed: no snapshot.
	if n, err := m.Agent.Bash(ctx, c.Name, agent.BashOptions{Command: "cat notes/todo.txt > /dev/null"}); err != nil || n.Snapshot != "" {
		t.Fatalf("a call that changes nothing: %+v %v", n, err)
	}

	ms, err := milestone.Make(ctx, m.Repo, c.Name, "Track the todo list")
	if err != nil || ms.Squashed != 4 {
		t.Fatalf("milestone: %+v %v", ms, err)
	}
	if subject, _ := m.Repo.Git.Output(ctx, "log", "-1", "--format=%s", c.Branch); subject != "Track the todo list" {
		t.Errorf("branch tip subject %q", subject)
	}

	a, err := m.Apply(ctx, c.Name, review.Options{Stdout: io.Discard, Stderr: io.Discard})
	if err != nil || a.Commits != 1 {
		t.Fatalf("apply: %+v %v", a, err)
	}
	if got, _ := m.Repo.Git.Output(ctx, "cat-file", "-p", "HEAD:notes/todo.txt"); got != "1\ntwo\n3" {
		t.Errorf("the user's HEAD after apply: %q", got)
	}
	if _, err := m.Delete(ctx, c.Name, true); err != nil {
		t.Fatal(err)
	}
}
