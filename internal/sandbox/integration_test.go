//go:build integration

package sandbox

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/internal/textedit"
	"github.com/litterbox-dev/litterbox/runner"
)

// realManager makes a fresh repository with a unique name and a Manager for it
// over the real engine; everything made for it is removed when the test ends.
func realManager(t *testing.T) *Manager {
	t.Helper()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbit"))
	testenv.NewRepo(t, dir, testenv.SmallFiles)
	m, err := Open(context.Background(), testenv.Exec(), engine.Docker, dir, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	return m
}

func exec(t *testing.T, m *Manager, name, script string) string {
	t.Helper()
	var out, errOut strings.Builder
	sb, err := m.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	code, err := sb.Exec(context.Background(), agent.ExecOptions{Cmd: []string{"sh", "-c", script}, Streams: box.Streams{Stdout: &out, Stderr: &errOut}})
	if err != nil || code != 0 {
		t.Fatalf("exec %q: code %d err %v stderr %s", script, code, err, errOut.String())
	}
	return out.String()
}

// useRunner sends every later command of m through r.
func useRunner(m *Manager, r runner.Runner) {
	m.Repo.Git.Runner = r
	m.Repo.Provider = engine.Docker.Provider(r)
}

// leftovers lists every resource of sandbox slug that still exists.
func leftovers(t *testing.T, m *Manager, slug string) []string {
	t.Helper()
	n := m.Repo.Names(slug)
	var left []string
	if out, _ := testenv.Docker("ps", "-aq", "--filter", "label=dev.litterbox.repo="+m.Repo.Root); out != "" {
		left = append(left, "container "+out)
	}
	if out, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name=^"+n.Container+"-"); out != "" {
		left = append(left, "volume "+out)
	}
	if out := testenv.Git(t, m.Repo.Root, "for-each-ref", "refs/heads/litterbox/", "refs/litterbox/"); out != "" {
		left = append(left, "refs "+out)
	}
	if _, err := os.Stat(m.Repo.Layout().Record(slug)); err == nil {
		left = append(left, "state file")
	}
	return left
}

func TestIntegrationCreateCopiesHeadExactly(t *testing.T) {
	m := realManager(t)
	ctx := context.Background()
	c, err := m.Create(ctx, create.CreateOptions{Name: "copy"})
	if err != nil {
		t.Fatal(err)
	}
	if head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD"); c.Base != head {
		t.Errorf("base %s, HEAD %s", c.Base, head)
	}
	if tip := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/copy"); tip != c.Base {
		t.Errorf("branch at %s, want %s", tip, c.Base)
	}
	// Every tracked file, with its content digest, mode and owner, and nothing else.
	got := exec(t, m, "copy", `cd /src && find . -type f | sort | while read -r f; do printf '%s %s %s\n' "$(stat -c '%a %u:%g' "$f")" "$(md5sum < "$f" | cut -d' ' -f1)" "$f"; done`)
	var want []string
	for _, f := range strings.Split(testenv.Git(t, m.Repo.Root, "ls-files"), "\n") {
		data, err := os.ReadFile(filepath.Join(m.Repo.Root, f))
		if err != nil {
			t.Fatal(err)
		}
		mode := "644"
		if fi, _ := os.Stat(filepath.Join(m.Repo.Root, f)); fi.Mode()&0o100 != 0 {
			mode = "755"
		}
		want = append(want, fmt.Sprintf("%s 1000:1000 %x ./%s", mode, md5.Sum(data), f))
	}
	// find | sort orders by path; so must we.
	sort.Slice(want, func(i, j int) bool { return strings.Fields(want[i])[3] < strings.Fields(want[j])[3] })
	if strings.TrimSpace(got) != strings.Join(want, "\n") {
		t.Errorf("/src differs from HEAD:\n got:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	// The sandbox user can create files at the top of /src.
	exec(t, m, "copy", "touch /src/new-file && mkdir /src/new-dir")
}

func TestIntegrationCreateDockerCalls(t *testing.T) {
	counter := &runner.Counter{Inner: testenv.Exec()}
	m := realManager(t)
	useRunner(m, counter)
	verbs := func(name string) string {
		t.Helper()
		counter.Reset()
		if _, err := m.Create(context.Background(), create.CreateOptions{Name: name}); err != nil {
			t.Fatal(err)
		}
		var docker []string
		for _, c := range counter.Commands() {
			if c[0] == "docker" {
				docker = append(docker, c[1])
			}
		}
		if len(docker) > 3 {
			sort.Strings(docker[:3])
		}
		return strings.Join(docker, ",")
	}
	// The preflight image inspect and, beside it, the memory budget (the
	// host's memory, the running sandboxes' limits); the base tree's
	// volume asked for its mark (there is none), made and filled through
	// a box never started (create, cp of the tree, rm); the sandbox's
	// layers (two volumes made, their directories read, /src made over
	// the tree); then create, cp of the helper (PID 1 runs from it),
	// start, the volume roots given to the user, setup.
	if got, want := verbs("count"), "image,info,ps,volume,volume,create,cp,rm,volume,volume,volume,volume,create,cp,start,exec,exec"; got != want {
		t.Errorf("the first create ran docker %s, want %s", got, want)
	}
	// A second sandbox of the commit copies no tree: the tree's mark is
	// read, and the layers made over it.
	if got, want := verbs("again"), "image,info,ps,volume,volume,volume,volume,volume,create,cp,start,exec,exec"; got != want {
		t.Errorf("the second create ran docker %s, want %s", got, want)
	}
	counter.Reset()
	if _, err := m.List(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	if n := counter.Count("docker"); n != 1 {
		t.Errorf("list ran %d docker commands, want 1", n)
	}
	counter.Reset()
	if _, err := m.Pause(context.Background(), "count"); err != nil {
		t.Fatal(err)
	}
	// inspect (whose container it is), pause.
	if n := counter.Count("docker"); n != 2 {
		t.Errorf("pause ran %d docker commands, want 2", n)
	}
}

// TestIntegrationCreateFailureAtEveryStepLeavesNothing fails each command of a
// create in turn, the way a dying engine would, and checks that a create either
// succeeds whole or leaves no container, volume, branch, ref or state.
func TestIntegrationCreateFailureAtEveryStepLeavesNothing(t *testing.T) {
	counter := &runner.Counter{Inner: testenv.Exec()}
	probe := realManager(t)
	useRunner(probe, counter)
	if _, err := probe.Create(context.Background(), create.CreateOptions{Name: "probe"}); err != nil {
		t.Fatal(err)
	}
	// git status asks for the dirty-tree warning beside the rest of the
	// create, so its place among the commands is not fixed: it is left out
	// of the count, and failed on its own below.
	var steps [][]string
	for _, c := range counter.Commands() {
		if !isStatus(runner.Join(c)) {
			steps = append(steps, c)
		}
	}
	for n := 1; n <= len(steps); n++ {
		step := runner.Join(steps[n-1])
		verb := strings.ReplaceAll(runner.Verb(runner.Cmd{Name: steps[n-1][0], Args: steps[n-1][1:]}), " ", "-")
		t.Run(fmt.Sprintf("%d-%s", n, verb), func(t *testing.T) {
			fault := &runner.Fault{Inner: testenv.Exec(), N: n, Stderr: "Error response from daemon: injected fault"}
			m := realManager(t)
			useRunner(m, statusAround{fault: fault, inner: testenv.Exec()})
			_, err := m.Create(context.Background(), create.CreateOptions{Name: "victim"})
			if !fault.Fired() {
				t.Fatalf("fault %d (%s) never fired", n, step)
			}
			if err == nil {
				t.Fatalf("create succeeded although step %d (%s) failed", n, step)
			}
			if !strings.Contains(err.Error(), "injected fault") {
				t.Errorf("error %q does not carry the cause", err)
			}
			if left := leftovers(t, m, "victim"); len(left) > 0 {
				t.Errorf("failure at step %d (%s) left %v", n, step, left)
			}
		})
	}
	// A failing git status costs only the dirty-tree warning.
	t.Run("status", func(t *testing.T) {
		fault := &runner.Fault{Inner: testenv.Exec(), Match: " status", N: 1}
		m := realManager(t)
		useRunner(m, fault)
		if _, err := m.Create(context.Background(), create.CreateOptions{Name: "victim"}); err != nil {
			t.Fatalf("create failed with its git status: %v", err)
		}
		if !fault.Fired() {
			t.Fatal("the create ran no git status")
		}
	})
}

func isStatus(line string) bool {
	return strings.HasPrefix(line, "git ") && strings.Contains(line, " status")
}

// statusAround runs git status past the fault, uncounted.
type statusAround struct{ fault, inner runner.Runner }

func (s statusAround) Run(ctx context.Context, c runner.Cmd) (runner.Result, error) {
	if isStatus(runner.ShellLine(c)) {
		return s.inner.Run(ctx, c)
	}
	return s.fault.Run(ctx, c)
}

func TestIntegrationCreateHangingCopyIsCancelledAndRolledBack(t *testing.T) {
	fault := &runner.Fault{Inner: testenv.Exec(), Match: "docker cp", N: 1, Hang: true}
	m := realManager(t)
	useRunner(m, fault)
	// The deadline must come during the hang, the helper's copy: under a
	// loaded CI the steps before it took over 2 s, the deadline cut the
	// docker create short, and the engine made the container after the
	// rollback had looked for it.
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	_, err := m.Create(ctx, create.CreateOptions{Name: "hang"})
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("create: %v, want a deadline error", err)
	}
	if left := leftovers(t, m, "hang"); len(left) > 0 {
		t.Errorf("cancelled create left %v", left)
	}
}

func TestIntegrationConcurrentCreatesOfOneNameHaveOneWinner(t *testing.T) {
	m := realManager(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = m.Create(context.Background(), create.CreateOptions{Name: "race"})
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errorAs[*create.ExistsError](err):
			t.Errorf("loser got %v, want create.ExistsError", err)
		}
	}
	if wins != 1 {
		t.Errorf("%d creates won, want 1", wins)
	}
	if list, _ := m.List(context.Background(), false); len(list) != 1 || list[0].Status != create.StatusActive {
		t.Errorf("list %+v", list)
	}
}

func TestIntegrationFailedSetupIsKeptListedAndDeletable(t *testing.T) {
	m := realManager(t)
	m.Repo.Config.SetupCommand = "echo out; echo err >&2; exit 3"
	ctx := context.Background()
	c, err := m.Create(ctx, create.CreateOptions{Name: "bad-setup"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != create.StatusFailedSetup || c.Setup.ExitCode != 3 || c.Setup.Stdout != "out\n" || c.Setup.Stderr != "err\n" {
		t.Errorf("created %+v", c)
	}
	if list, _ := m.List(ctx, false); len(list) != 1 || list[0].Status != create.StatusFailedSetup {
		t.Errorf("list %+v", list)
	}
	if _, err := m.Delete(ctx, "bad-setup", true); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, m, "bad-setup"); len(left) > 0 {
		t.Errorf("delete left %v", left)
	}
}

func TestIntegrationContainerRemovedBehindOurBack(t *testing.T) {
	m := realManager(t)
	ctx := context.Background()
	if _, err := m.Create(ctx, create.CreateOptions{Name: "gone"}); err != nil {
		t.Fatal(err)
	}
	if _, err := testenv.Docker("rm", "-f", "-v", m.Repo.Names("gone").Container); err != nil {
		t.Fatal(err)
	}
	if list, _ := m.List(ctx, false); len(list) != 1 || list[0].Status != create.StatusMissing {
		t.Errorf("list %+v, want one missing", list)
	}
	if _, err := m.Pause(ctx, "gone"); !errors.Is(err, hostrepo.ErrMissing) {
		t.Errorf("pause: %v, want ErrMissing", err)
	}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "gone"}); !errorAs[*create.ExistsError](err) {
		t.Errorf("create over missing: %v, want create.ExistsError", err)
	}
	if _, err := m.Delete(ctx, "gone", false); err != nil {
		t.Fatal(err)
	}
	if left := leftovers(t, m, "gone"); len(left) > 0 {
		t.Errorf("delete left %v", left)
	}
}

func TestIntegrationStoppedSandboxIsListedAndResumed(t *testing.T) {
	m := realManager(t)
	ctx := context.Background()
	if _, err := m.Create(ctx, create.CreateOptions{Name: "stopped"}); err != nil {
		t.Fatal(err)
	}
	exec(t, m, "stopped", "echo kept > /src/work.txt")
	if _, err := testenv.Docker("stop", "-t", "1", m.Repo.Names("stopped").Container); err != nil {
		t.Fatal(err)
	}
	if list, _ := m.List(ctx, false); len(list) != 1 || list[0].Status != create.StatusStopped {
		t.Errorf("list %+v, want stopped", list)
	}
	o, err := m.Resume(ctx, "stopped")
	if err != nil || !o.Changed || o.Status != create.StatusActive {
		t.Fatalf("resume: %+v %v", o, err)
	}
	if got := exec(t, m, "stopped", "cat /src/work.txt"); got != "kept\n" {
		t.Errorf("work after restart: %q", got)
	}
}

func TestIntegrationPauseKeepsProcessState(t *testing.T) {
	m := realManager(t)
	ctx := context.Background()
	if _, err := m.Create(ctx, create.CreateOptions{Name: "frozen"}); err != nil {
		t.Fatal(err)
	}
	exec(t, m, "frozen", "echo in-memory > /tmp/state")
	if _, err := m.Pause(ctx, "frozen"); err != nil {
		t.Fatal(err)
	}
	state, _ := testenv.Docker("inspect", "--format", "{{.State.Status}}", m.Repo.Names("frozen").Container)
	if state != "paused" {
		t.Errorf("container state %q after pause", state)
	}
	if _, err := m.Resume(ctx, "frozen"); err != nil {
		t.Fatal(err)
	}
	if got := exec(t, m, "frozen", "cat /tmp/state"); got != "in-memory\n" {
		t.Errorf("tmpfs state after resume: %q", got)
	}
}

func TestIntegrationUnreachableEngineFailsFastLeavingNothing(t *testing.T) {
	m := realManager(t)
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/litterbox-test.sock")
	start := time.Now()
	_, err := m.Create(context.Background(), create.CreateOptions{Name: "nodaemon"})
	if !errors.Is(err, box.ErrEngineUnreachable) {
		t.Fatalf("create: %v, want ErrDaemonUnreachable", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v", took)
	}
	if out := testenv.Git(t, m.Repo.Root, "for-each-ref", "refs/heads/litterbox/"); out != "" {
		t.Errorf("branch left: %s", out)
	}
}

func TestIntegrationUncommittedChangesAreReportedAndHostUntouched(t *testing.T) {
	m := realManager(t)
	if err := os.WriteFile(filepath.Join(m.Repo.Root, "README.md"), []byte("edited on host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, m.Repo.Root, "add", "README.md")
	if err := os.WriteFile(filepath.Join(m.Repo.Root, "untracked.txt"), []byte("u"), 0o644); err != nil {
		t.Fatal(err)
	}
	status := testenv.Git(t, m.Repo.Root, "status", "--porcelain")
	head := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")
	branch := testenv.Git(t, m.Repo.Root, "symbolic-ref", "HEAD")
	c, err := m.Create(context.Background(), create.CreateOptions{Name: "dirty"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "2 uncommitted change(s)") || !strings.Contains(c.Warnings[0], "NOT in the sandbox") {
		t.Errorf("warnings %q", c.Warnings)
	}
	if got := exec(t, m, "dirty", "cat README.md; ls untracked.txt 2>&1 || true"); !strings.HasPrefix(got, "# test repo\n") || !strings.Contains(got, "No such file") {
		t.Errorf("sandbox sees host edits: %q", got)
	}
	if s := testenv.Git(t, m.Repo.Root, "status", "--porcelain"); s != status {
		t.Errorf("host status changed:\n%s\nwas\n%s", s, status)
	}
	if h := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD"); h != head {
		t.Errorf("HEAD moved")
	}
	if b := testenv.Git(t, m.Repo.Root, "symbolic-ref", "HEAD"); b != branch {
		t.Errorf("current branch changed to %s", b)
	}
}

func TestIntegrationBaseRef(t *testing.T) {
	m := realManager(t)
	first := testenv.Git(t, m.Repo.Root, "rev-parse", "HEAD")
	if err := os.WriteFile(filepath.Join(m.Repo.Root, "second.txt"), []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, m.Repo.Root, "add", "second.txt")
	testenv.Git(t, m.Repo.Root, "commit", "-q", "-m", "second")
	c, err := m.Create(context.Background(), create.CreateOptions{Name: "old", BaseRef: first})
	if err != nil {
		t.Fatal(err)
	}
	if c.Base != first {
		t.Errorf("base %s, want %s", c.Base, first)
	}
	if got := exec(t, m, "old", "ls /src/second.txt 2>/dev/null || echo absent"); got != "absent\n" {
		t.Errorf("second.txt in old sandbox: %q", got)
	}
	if _, err := m.Create(context.Background(), create.CreateOptions{Name: "nope", BaseRef: "no-such-ref"}); err == nil || !strings.Contains(err.Error(), "no-such-ref") {
		t.Errorf("unknown base: %v", err)
	}
	if left := leftovers(t, m, "nope"); len(left) != 2 { // the "old" container and its branch only
		t.Errorf("left %v", left)
	}
}

// one is a single edit.
func one(old, new string, all bool) []textedit.Op {
	return []textedit.Op{{Old: old, New: new, ReplaceAll: all}}
}
