//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/services"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/internal/watch"
	"github.com/litterbox-dev/litterbox/runner"
)

// attackEnv is what an attack row acts on: a repository with an attacker's
// sandbox "work" and a bystander "other", and a file of the host's outside
// the repository.
type attackEnv struct {
	m        *Manager
	image    string
	sentinel string // a host file no row may touch
}

// attack is one row of the attack table: what an agent (through the tools
// an MCP server gives it) or a repository (through what it commits) tries,
// and what must come of it besides the invariants every row checks.
type attack struct {
	name string
	side string // "agent", "repo" or "engine" (another user of the engine)
	// gvisor marks a row whose defence is the sandbox's kernel (its
	// processes, limits, mounts and path resolution): the run under gVisor,
	// which changes only that kernel, has these rows alone. The others'
	// defences are the host's (review, build, rendering, labels) or the
	// helper's and git's (snapshot bounds), which gVisor does not change.
	gvisor bool
	// expect is the outcome run asserts, besides the invariants.
	expect string
	run    func(t *testing.T, e *attackEnv)
}

// untouched is what no attack may change: the host repository's HEAD,
// index, work tree, config and hooks, the bystander sandbox's branch and
// files, and the host file outside the repository.
func untouched(t *testing.T, e *attackEnv) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(hostState(t, e.m))
	for _, f := range []string{"config", "info/exclude"} {
		data, _ := os.ReadFile(filepath.Join(e.m.Repo.GitDir, f))
		fmt.Fprintf(&b, "%s %x\n", f, sha256.Sum256(data))
	}
	filepath.WalkDir(filepath.Join(e.m.Repo.GitDir, "hooks"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, "hook %s %x\n", d.Name(), sha256.Sum256(data))
		}
		return nil
	})
	data, err := os.ReadFile(e.sentinel)
	fmt.Fprintf(&b, "sentinel %q %v\n", data, err)
	b.WriteString("other " + testenv.Git(t, e.m.Repo.Root, "rev-parse", "litterbox/other") + "\n")
	b.WriteString("other's file " + exec(t, e.m, "other", "cat /src/README.md"))
	return b.String()
}

// TestIntegrationAttackTable runs each attack against one repository and
// checks after each that nothing outside the attacker's own sandbox and
// branch changed, on the busybox fixture and on a Debian userland.
func TestIntegrationAttackTable(t *testing.T) {
	images := []string{"busybox:latest", "litterbox-test/debian:bookworm"}
	gvisor := os.Getenv("LITTERBOX_TEST_ISOLATION") == config.IsolationGVisor
	if gvisor {
		// Under gVisor on busybox alone, and only the rows whose defence is
		// the sandbox's kernel: what gVisor changes is that kernel, which
		// both images share, and the whole table took three times as long
		// there (25 min an image on a busy machine).
		images = images[:1]
	}
	for _, image := range images {
		t.Run(imageName(image), func(t *testing.T) { attackTable(t, image, gvisor) })
	}
}

func attackTable(t *testing.T, image string, kernelRowsOnly bool) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbat"))
	testenv.NewRepo(t, dir, testenv.Files{"README.md": "hello\n", ".gitignore": ".litterbox.local.toml\nnode_modules/\n"})
	cfg := config.Default()
	cfg.Image, cfg.Memory, cfg.PidsLimit = image, "256m", 128
	isolate(&cfg)
	m, err := Open(ctx, testenv.Exec(), engine.Docker, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	// The agent's calls go over a channel kept per sandbox, as an MCP
	// server's do; the CLI's exec of its own is what the e2e suites use.
	m.Agent.KeepChannels()
	t.Cleanup(m.Agent.Close)
	for _, name := range []string{"work", "other"} {
		if _, err := m.Create(ctx, create.CreateOptions{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	e := &attackEnv{m: m, image: image, sentinel: filepath.Join(t.TempDir(), "host-secret")}
	if err := os.WriteFile(e.sentinel, []byte("host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A row's state after is the next row's before: nothing runs between
	// them but the alive check, in the attacker's own sandbox. A row cut
	// short (t.Fatal) leaves none, and the next reads it again.
	kept := ""
	for _, a := range allAttacks() {
		if kernelRowsOnly && !a.gvisor {
			continue
		}
		t.Run(a.side+"/"+a.name, func(t *testing.T) {
			defer keepAlive(t, e)
			before := kept
			if kept = ""; before == "" {
				before = untouched(t, e)
			}
			t.Log("expect: " + a.expect)
			a.run(t, e)
			after := untouched(t, e)
			if after != before {
				t.Errorf("the attack changed the host or the bystander:\nbefore:\n%s\nafter:\n%s", before, after)
			}
			kept = after
			if out := exec(t, m, "work", "echo alive"); out != "alive\n" {
				t.Errorf("the attacker's sandbox does not answer afterwards: %q", out)
			}
		})
	}
}

// endedUnderGVisor reports whether err says the attacker's gVisor sandbox
// ended under the call (with exit code, unless -1), within 20 s of start,
// and then starts it again; a sandbox that ended otherwise fails the test.
func endedUnderGVisor(t *testing.T, e *attackEnv, err error, start time.Time, code int) bool {
	t.Helper()
	var ended *agent.EndedError
	if !errors.As(err, &ended) {
		return false
	}
	took := time.Since(start)
	t.Logf("under gVisor, after %v: %v", took.Round(time.Millisecond), err)
	if took > 20*time.Second || (code >= 0 && ended.ExitCode != code) {
		t.Fatalf("the sandbox's end (exit %d) told after %v", ended.ExitCode, took)
	}
	if _, err := e.m.Resume(context.Background(), "work"); err != nil {
		t.Fatal(err)
	}
	return true
}

// keepAlive starts the attacker's sandbox again after a row that failed
// with it ended, so that the rows after it test what they are for rather
// than fail on the stopped sandbox (the row's own failure is reported).
func keepAlive(t *testing.T, e *attackEnv) {
	if !t.Failed() {
		return
	}
	ctx := context.Background()
	if in, err := e.m.Repo.Provider.Inspect(ctx, e.m.Repo.Names("work").Container); err == nil && in.State != "running" {
		t.Logf("the row left the sandbox %s: resuming it for the next rows", in.State)
		if _, err := e.m.Resume(ctx, "work"); err != nil {
			t.Logf("resume: %v", err)
		}
	}
}

// resumeIfEnded watches the attacker's gVisor sandbox for a while, and
// starts it again if it ends.
func resumeIfEnded(t *testing.T, e *attackEnv, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(time.Second) {
		in, err := e.m.Repo.Provider.Inspect(ctx, e.m.Repo.Names("work").Container)
		if err != nil {
			t.Fatal(err)
		}
		if in.State != "running" {
			t.Logf("the sandbox ended %v after the call (exit %d)", d-time.Until(deadline), in.ExitCode)
			if _, err := e.m.Resume(ctx, "work"); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}

// allAttacks is the whole table: the first rows below, then one slice per
// boundary (review, build, transfer, processes, bounds, the warm pool), each in a file of
// its own.
func allAttacks() []attack {
	var all []attack
	for _, rows := range [][]attack{attacks, reviewAttacks, buildAttacks, transferAttacks, processAttacks, boundsAttacks, poolAttacks, provenanceAttacks, takingAttacks, classAttacks, layerAttacks} {
		all = append(all, rows...)
	}
	return all
}

var attacks = []attack{
	{name: "committed config that loosens the sandbox", side: "repo", expect: "create refuses, naming the key and file; nothing is made", run: func(t *testing.T, e *attackEnv) {
		// Someone else's repository: its own sandbox would run as root on a
		// network, with a writable root.
		r := freshRepo(t, e, "[docker]\nuser = \"0:0\"\nread-only = false\nnetwork = \"bridge\"\n")
		var we *hostrepo.WeakeningError
		if _, err := r.Create(context.Background(), create.CreateOptions{Name: "x"}); !errors.As(err, &we) {
			t.Fatalf("create: %v, want a refusal naming the setting", err)
		}
		if refs := testenv.Git(t, r.Repo.Root, "for-each-ref", "refs/heads/litterbox/"); refs != "" {
			t.Errorf("a refused create left %s", refs)
		}
	}},
	{name: "config written by the agent and merged", side: "agent", expect: "review names .litterbox.toml; after a merge the next create refuses until trust", run: func(t *testing.T, e *attackEnv) {
		r := freshRepo(t, e, "")
		if _, err := r.Create(context.Background(), create.CreateOptions{Name: "w"}); err != nil {
			t.Fatal(err)
		}
		res, err := r.Agent.Bash(context.Background(), "w", agent.BashOptions{Command: `printf '[docker]\nnetwork = "bridge"\nuser = "0:0"\n' > .litterbox.toml`})
		if err != nil || res.Snapshot == "" {
			t.Fatalf("%+v %v", res, err)
		}
		cs, _, err := r.ControlChanges(context.Background(), "w")
		if err != nil || len(cs) != 1 || cs[0].Path != ".litterbox.toml" {
			t.Fatalf("review names %v (%v), want .litterbox.toml", cs, err)
		}
		// The human merges it anyway: the next sandbox is still confined.
		testenv.Git(t, r.Repo.Root, "merge", "-q", "--no-edit", "litterbox/w")
		cfg, err := config.Load(r.Repo.Root)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Image = e.image
		r.Repo.Config = cfg
		var we *hostrepo.WeakeningError
		if _, err := r.Create(context.Background(), create.CreateOptions{Name: "next"}); !errors.As(err, &we) {
			t.Fatalf("create after the merge: %v", err)
		}
	}},
	{name: ".git, .GIT and sub/.git paths", side: "agent", expect: "nothing under a .git component is committed; the rest of the call is", run: func(t *testing.T, e *attackEnv) {
		res := bash(t, e.m, "mkdir -p .git/hooks .GIT sub/.git && echo 'touch /tmp/pwned' > .git/hooks/post-checkout && echo '[core] fsmonitor = evil' > .GIT/config && echo x > sub/.git/HEAD && echo ok > ok-git.txt")
		if _, err := e.m.Agent.Write(context.Background(), "work", ".git/hooks/pre-commit", []byte("evil\n")); err != nil {
			t.Fatal(err)
		}
		tr := tree(t, e.m)
		if res.Snapshot == "" || !strings.Contains(tr, "ok-git.txt") {
			t.Fatalf("the call's ordinary file was not committed: %+v\n%s", res, tr)
		}
		for _, line := range strings.Split(tr, "\n") {
			for _, c := range strings.Split(strings.ToLower(line[strings.IndexByte(line, ' ')+1:]), "/") {
				if c == ".git" {
					t.Errorf("committed %q", line)
				}
			}
		}
	}},
	{name: ".git, .GIT and sub/.git paths and names with line breaks, tabs and escapes among 2,000 new files (trees built without fast-import)", side: "agent", expect: "nothing under a .git component is committed; every other name is, as the sandbox has it; git fsck --strict passes", run: func(t *testing.T, e *attackEnv) {
		odd := []string{"nl\nname", "tab\tname", "esc\x1b]0;x\a\x9b", `q"uote\back`}
		res := bash(t, e.m, `mkdir -p bulk .git/hooks .GIT sub/.git && i=0 && while [ $i -lt 2000 ]; do : > bulk/f$i; i=$((i+1)); done && `+
			`echo 'touch /tmp/pwned' > .git/hooks/post-checkout && echo x > .GIT/config && echo x > sub/.git/HEAD && `+
			`printf 1 > "$(printf 'nl\nname')" && printf 2 > "$(printf 'tab\tname')" && printf 3 > "$(printf 'esc\033]0;x\007\233')" && printf 4 > 'q"uote\back'`)
		defer bash(t, e.m, `rm -rf bulk .GIT sub "$(printf 'nl\nname')" "$(printf 'tab\tname')" "$(printf 'esc\033]0;x\007\233')" 'q"uote\back'`)
		if res.Snapshot == "" || len(res.Withheld)+res.WithheldMore != 0 {
			t.Fatalf("the call: %+v", res)
		}
		names := map[string]bool{}
		for _, p := range strings.Split(strings.TrimSuffix(testenv.Git(t, e.m.Repo.Root, "ls-tree", "-r", "-z", "--name-only", "litterbox/work"), "\x00"), "\x00") {
			names[p] = true
			for _, c := range strings.Split(strings.ToLower(p), "/") {
				if c == ".git" {
					t.Errorf("committed %q", p)
				}
			}
		}
		bulk := 0
		for p := range names {
			if strings.HasPrefix(p, "bulk/") {
				bulk++
			}
		}
		if bulk != 2000 {
			t.Errorf("%d of the 2,000 files committed", bulk)
		}
		for _, n := range odd {
			if !names[n] {
				t.Errorf("%q is not committed as the sandbox has it", n)
			}
		}
		testenv.Git(t, e.m.Repo.Root, "fsck", "--strict", "--no-dangling")
	}},
	{name: ".git paths and a hook made between calls by a background command", side: "agent", expect: "the next call commits them as a between-calls snapshot with nothing under a .git component", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		if _, err := servicectl.Background(ctx, e.m.Repo, "work", "sneak", agent.BashOptions{Command: "mkdir -p .git/hooks sub/.GIT && echo 'touch /tmp/pwned' > .git/hooks/post-checkout && echo x > sub/.GIT/config && echo ok > between-ok.txt; sleep 60"}); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); exec(t, e.m, "work", "cat between-ok.txt 2>/dev/null || true") != "ok\n"; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the background command did not run")
			}
		}
		if _, err := servicectl.Control(ctx, e.m.Repo, "work", services.Stop, "sneak"); err != nil {
			t.Fatal(err)
		}
		res := bash(t, e.m, "true")
		tr := tree(t, e.m)
		if res.Between.Commit == "" || !strings.Contains(tr, "between-ok.txt") {
			t.Fatalf("the background command's file was not committed between calls: %+v\n%s", res, tr)
		}
		for _, line := range strings.Split(tr, "\n") {
			for _, c := range strings.Split(strings.ToLower(line[strings.IndexByte(line, ' ')+1:]), "/") {
				if c == ".git" {
					t.Errorf("committed %q", line)
				}
			}
		}
		if msg := testenv.Git(t, e.m.Repo.Root, "log", "-1", "--format=%B", res.Between.Commit); msg != "between calls: 1 path" {
			t.Errorf("the between-calls message is %q", msg)
		}
	}},
	{name: "terminal escapes in the call a waiting exec names", side: "agent", expect: "the waiting line, and the running call's row in litterbox watch, show the escapes as text", run: func(t *testing.T, e *attackEnv) {
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = e.m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: "sleep 2 # \033]52;c;aGk=\007\033[2J"})
		}()
		time.Sleep(500 * time.Millisecond)
		// litterbox watch reads the running call from list, which reads it
		// from the lock's holder (as log --audit --follow does).
		list, err := e.m.List(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		var call *Call
		for _, in := range list {
			if in.Name == "work" {
				call = in.Call
			}
		}
		if call == nil {
			t.Fatalf("list has no running call for work: %+v", list)
		}
		_, rows := watch.Lines([]watch.Row{{Name: "work", Status: "active", Call: call.Call, CallSince: call.Since}}, 200, time.Now())
		if !strings.Contains(rows[0], "bash: sleep 2") || !strings.Contains(rows[0], "52;c;aGk=") || strings.ContainsAny(rows[0], "\x1b\x07") {
			t.Errorf("the running call's row: %q", rows[0])
		}
		var line string
		unlock, err := e.m.Repo.Lock(layout.OnWait(context.Background(), func(h layout.Holder) { line = h.Waiting(time.Now()) }), "work")
		if err != nil {
			t.Fatal(err)
		}
		unlock()
		<-done
		if !strings.Contains(line, "waiting for bash: sleep 2") || !strings.Contains(line, "52;c;aGk=") || strings.ContainsAny(line, "\x1b\x07") {
			t.Errorf("the waiting line: %q", line)
		}
	}},
	{name: "symlinks out of /src, followed by every file tool and download", side: "agent", gvisor: true, expect: "each resolves in the container; download copies the link itself", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		bash(t, e.m, "ln -sf / root && ln -sf "+e.sentinel+" secret && ln -sf ../../.. up")
		// Each resolves in the container, whose files are its own.
		if r, err := e.m.Agent.Read(ctx, "work", "secret", 0, 0); err == nil {
			t.Errorf("read through a symlink to the host's path found %q", r.Content)
		}
		if _, err := e.m.Agent.Write(ctx, "work", "secret", []byte("overwritten\n")); err != nil {
			t.Fatalf("write through the symlink: %v", err) // lands in the container, at the link
		}
		for _, p := range []string{"up/etc/passwd", "root/etc/passwd"} {
			if _, err := e.m.Agent.Edit(ctx, "work", p, one("root", "pwned", false)); err == nil {
				t.Errorf("edit %s succeeded: the container's /etc is read-only", p)
			}
			if _, err := e.m.Agent.Patch(ctx, "work", p, "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n"); err == nil {
				t.Errorf("patch %s succeeded", p)
			}
		}
		dest := filepath.Join(t.TempDir(), "dl")
		if n, err := e.m.Agent.Download(ctx, "work", "root", dest); err != nil || n != 1 {
			t.Fatalf("download: %d entries, %v", n, err)
		}
		if fi, err := os.Lstat(dest); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("download of a symlink to / made %v (%v), want the symlink itself", fi.Mode(), err)
		}
	}},
	{name: ".. in every path parameter", side: "agent", gvisor: true, expect: "every path resolves in the container's file system", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		up := "../../../../.." + e.sentinel
		if r, err := e.m.Agent.Read(ctx, "work", up, 0, 0); err == nil {
			t.Errorf("read %s: %q", up, r.Content)
		}
		if _, err := e.m.Agent.Write(ctx, "work", "../../../tmp/dotdot.txt", []byte("in the container\n")); err != nil {
			t.Fatal(err)
		}
		if out := exec(t, e.m, "work", "cat /tmp/dotdot.txt"); out != "in the container\n" {
			t.Errorf("the write did not land in the container's /tmp: %q", out)
		}
		if _, err := os.Stat("/tmp/dotdot.txt"); err == nil {
			t.Error("the write reached the host's /tmp")
		}
		_, _ = e.m.Agent.Edit(ctx, "work", up, one("host", "pwned", false))
		_, _ = e.m.Agent.Patch(ctx, "work", up, "--- a\n+++ b\n@@ -1 +1 @@\n-host\n+pwned\n")
		_, _, _ = e.m.Agent.Ls(ctx, "work", "../../..", true)
		_, _, _ = e.m.Agent.Glob(ctx, "work", "**", "../../..")
		_, _, _ = e.m.Agent.Grep(ctx, "work", "host", "../../../..", "")
		if res, err := e.m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "cat " + e.sentinel, Workdir: "../../.."}); err == nil && res.ExitCode == 0 {
			t.Errorf("bash read the host file: %q", res.Stdout)
		}
	}},
	{name: "terminal escapes in file names and commands", side: "agent", expect: "log, diff --stat, review warnings and a call's notes on a withheld file print no control character", run: func(t *testing.T, e *attackEnv) {
		res := bash(t, e.m, "printf 'x' > \"$(printf 'esc\\033]0;owned\\007.txt')\" && mkdir -p \"$(printf 'd\\033[2J')\" && echo 'echo' > \"$(printf 'd\\033[2J')/.envrc\" # \033[31m red")
		if res.Snapshot == "" {
			t.Fatalf("%+v", res)
		}
		var out, errOut bytes.Buffer
		if err := e.m.Log(context.Background(), "work", false, []string{"--stat"}, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		if err := e.m.Diff(context.Background(), "work", []string{"--stat"}, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		cs, _, err := e.m.ControlChanges(context.Background(), "work")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			out.WriteString(c.String() + "\n")
		}
		if bytes.ContainsAny(out.Bytes(), "\x1b\x07\x9b") || bytes.ContainsAny(errOut.Bytes(), "\x1b\x07") {
			t.Errorf("review output carries control characters:\n%q", out.String())
		}
		// The notes `litterbox exec` prints after a call name the files it
		// withheld, whose names the agent chose.
		localConfig(t, e.m, "[snapshot]\nmax-file-size = \"1k\"\n")
		defer os.Remove(filepath.Join(e.m.Repo.Root, config.LocalFile))
		big := bash(t, e.m, "head -c 4096 /dev/zero > \"$(printf 'w\033]52;c;aGk=\007\233.bin')\"")
		notes := strings.Join(big.Notes(), "\n")
		if len(big.Withheld) != 1 || !strings.Contains(notes, "52;c;aGk=") || strings.ContainsAny(notes, "\x1b\x07") || strings.IndexByte(notes, 0x9b) >= 0 {
			t.Errorf("withheld %+v; notes %q", big.Withheld, notes)
		}
		bash(t, e.m, "rm -f w*.bin")
	}},
	{name: "forged dev.litterbox labels on a foreign container", side: "agent", expect: "list leaves it out; delete does not remove it", run: func(t *testing.T, e *attackEnv) {
		m := e.m
		name := "litterbox-" + m.Repo.RepoSlug + "-0badc0de-forged"
		t.Cleanup(func() { testenv.Docker("rm", "-f", name) })
		if _, err := testenv.Docker("run", "-d", "--name", name, "--network", "none",
			"--label", hostrepo.LabelManaged+"=true", "--label", hostrepo.LabelRepo+"="+m.Repo.RepoPath, "--label", hostrepo.LabelRepoSlug+"="+m.Repo.RepoSlug,
			"--label", hostrepo.LabelSandbox+"=forged", "--label", hostrepo.LabelRepoID+"=0badc0de",
			"busybox:latest", "sleep", "600"); err != nil {
			t.Fatal(err)
		}
		list, err := m.List(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range list {
			if s.Name == "forged" {
				t.Errorf("list shows the forged container: %+v", s)
			}
		}
		if _, err := m.Delete(context.Background(), "forged", true); err == nil {
			t.Error("delete of the forged name succeeded")
		}
		if state, err := testenv.Docker("inspect", "--format", "{{.State.Status}}", name); err != nil || state != "running" {
			t.Errorf("the foreign container is %q (%v) after the attempts", state, err)
		}
	}},
	{name: "another engine user renames a sandbox's container away and puts one with this repository's labels under its name", side: "engine", expect: "a call from a new process reaches the sandbox's own container by the id its create kept, inspects nothing first, and never execs in the impostor", run: func(t *testing.T, e *attackEnv) {
		r := freshRepo(t, e, "")
		ctx := context.Background()
		if _, err := r.Create(ctx, create.CreateOptions{Name: "work"}); err != nil {
			t.Fatal(err)
		}
		n := r.Repo.Names("work")
		if !box.ValidID(n.ID) {
			t.Fatalf("the record keeps no container id: %+v", n)
		}
		if _, err := testenv.Docker("rename", n.Container, n.Container+"-away"); err != nil {
			t.Fatal(err)
		}
		if _, err := testenv.Docker("run", "-d", "--name", n.Container, "--network", "none",
			"--label", hostrepo.LabelManaged+"=true", "--label", hostrepo.LabelRepo+"="+r.Repo.RepoPath, "--label", hostrepo.LabelRepoSlug+"="+r.Repo.RepoSlug,
			"--label", hostrepo.LabelSandbox+"=work", "--label", hostrepo.LabelRepoID+"="+r.Repo.RepoID,
			"busybox:latest", "sh", "-c", "mkdir -p /src && sleep 600"); err != nil {
			t.Fatal(err)
		}
		count := &runner.Counter{Inner: testenv.Exec()}
		fresh, err := Open(ctx, count, engine.Docker, r.Repo.Root, r.Repo.Config)
		if err != nil {
			t.Fatal(err)
		}
		res, err := fresh.Agent.Bash(ctx, "work", agent.BashOptions{Command: "echo ours > proof.txt"})
		if err != nil || res.ExitCode != 0 || show(t, r, "proof.txt") != "ours" {
			t.Fatalf("the call: %+v %v", res, err)
		}
		for _, c := range count.Commands() {
			if c[0] == "docker" && (c[1] == "inspect" || slices.Contains(c, n.Container)) {
				t.Errorf("the call ran %q", strings.Join(c, " "))
			}
		}
		if out, _ := testenv.Docker("exec", n.Container+"-away", "cat", "/src/proof.txt"); out != "ours" {
			t.Errorf("the sandbox's own container holds %q", out)
		}
		if out, err := testenv.Docker("exec", n.Container, "ls", "/src"); err != nil || out != "" {
			t.Errorf("the impostor's /src holds %q (%v)", out, err)
		}
	}},
	{name: "a huge file", side: "agent", expect: "not committed; .git/objects grows by under 1 MB; the rest is committed", run: func(t *testing.T, e *attackEnv) {
		before := objectsSize(t, e.m)
		res := bash(t, e.m, "head -c 300000000 /dev/zero > huge.bin && echo small > small-huge.txt")
		if len(res.Withheld) != 1 || res.Withheld[0].Path != "huge.bin" || !strings.Contains(tree(t, e.m), "small-huge.txt") {
			t.Errorf("withheld %+v", res.Withheld)
		}
		if grew := objectsSize(t, e.m) - before; grew > 1<<20 {
			t.Errorf(".git/objects grew by %d bytes", grew)
		}
		bash(t, e.m, "rm huge.bin")
	}},
	{name: "many small files", side: "agent", expect: "at most max-call-size (4 KiB a file) committed; the rest waits", run: func(t *testing.T, e *attackEnv) {
		// 20,000 files past a call budget of 8 MiB: the same bound holds a
		// million of them, at 4 KiB a file. Under gVisor, whose file
		// system calls cost more (this row took 14 min there), 4,000
		// files past 2 MiB.
		per, budget, size := 1000, 8<<20, "8m"
		if e.m.Repo.Config.Isolation == config.IsolationGVisor {
			per, budget, size = 200, 2<<20, "2m"
		}
		all := 20 * per
		localConfig(t, e.m, "[snapshot]\nmax-call-size = \""+size+"\"\nmax-file-size = \"1m\"\n")
		defer os.Remove(filepath.Join(e.m.Repo.Root, config.LocalFile))
		before := objectsSize(t, e.m)
		res := bash(t, e.m, fmt.Sprintf(`awk 'BEGIN{for(d=0;d<20;d++){system("mkdir -p many/" d); for(i=0;i<%d;i++){f="many/" d "/" i; print d "-" i > f; close(f)}}}'`, per))
		committed := strings.Count(tree(t, e.m), " many/")
		if withheld := len(res.Withheld) + res.WithheldMore; committed == 0 || committed > budget/4096 || withheld != all-committed || len(res.Withheld) > 100 {
			t.Errorf("committed %d, withheld %d (%d listed) of %d", committed, withheld, len(res.Withheld), all)
		}
		if grew := objectsSize(t, e.m) - before; grew > int64(budget)*3/2 {
			t.Errorf(".git/objects grew by %d bytes in one call", grew)
		}
		// The next calls commit the rest, a budget at a time.
		for i := 0; i < 12 && strings.Count(tree(t, e.m), " many/") < all; i++ {
			bash(t, e.m, "true")
		}
		if n := strings.Count(tree(t, e.m), " many/"); n != all {
			t.Errorf("after the next calls, %d of %d files are committed", n, all)
		}
		if notes := strings.Join(res.Notes(), "\n"); !strings.Contains(notes, "past max-call-size ("+size+")") {
			t.Errorf("notes: %s", notes)
		}
		bash(t, e.m, "rm -rf many")
	}},
	{name: "a fork bomb", side: "agent", gvisor: true, expect: "the pids limit stops it; the sandbox answers. Under gVisor RLIMIT_NPROC stops it, but its kernel may end then or moments later (on the ptrace platform its threads outgrow the engine's limit or the memory): a call says so, and resume starts it again with its files", run: func(t *testing.T, e *attackEnv) {
		start := time.Now()
		res, err := e.m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: "bomb() { bomb | bomb & }; bomb; sleep 2", Timeout: 10 * time.Second})
		if e.m.Repo.Config.Isolation == config.IsolationGVisor {
			if !endedUnderGVisor(t, e, err, start, -1) {
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("fork bomb under gVisor: exit %d, timed out %v", res.ExitCode, res.TimedOut)
				resumeIfEnded(t, e, 20*time.Second)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("fork bomb: exit %d, timed out %v", res.ExitCode, res.TimedOut)
	}},
	{name: "a memory bomb", side: "agent", gvisor: true, expect: "the OOM killer ends the command (exit 137); the sandbox answers. Under gVisor it ends the sandbox (its kernel holds all the memory): the call says so within 20 s, and resume starts it again with its files", run: func(t *testing.T, e *attackEnv) {
		start := time.Now()
		res, err := e.m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: `awk 'BEGIN{s="xxxxxxxxxxxxxxxx"; while(1) s = s s}'`, Timeout: 60 * time.Second})
		if e.m.Repo.Config.Isolation == config.IsolationGVisor {
			if !endedUnderGVisor(t, e, err, start, 137) {
				t.Fatalf("under gVisor: %+v %v, want the sandbox's end (exit 137)", res, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 {
			t.Errorf("the memory bomb ended well: %+v", res)
		}
		t.Logf("memory bomb: exit %d, timed out %v", res.ExitCode, res.TimedOut)
	}},
	{name: "filling /src", side: "agent", gvisor: true, expect: "the disk guard trips, write is refused, freeing space lifts it", run: func(t *testing.T, e *attackEnv) {
		localConfig(t, e.m, "[docker]\ndisk = \"4m\"\n")
		defer os.Remove(filepath.Join(e.m.Repo.Root, config.LocalFile))
		res := bash(t, e.m, "mkdir -p node_modules && head -c 8000000 /dev/zero > node_modules/fill")
		if res.DiskOver == nil {
			t.Fatalf("8 MB against a 4m guard: %+v", res)
		}
		var full *agent.DiskFullError
		if _, err := e.m.Agent.Write(context.Background(), "work", "more.txt", []byte("x")); !errors.As(err, &full) {
			t.Errorf("write while over: %v", err)
		}
		if res := bash(t, e.m, "rm -rf node_modules"); res.DiskOver != nil {
			t.Errorf("still over after freeing: %+v", res.DiskOver)
		}
	}},
	{name: "a hostile home copied by fork: links to /, to a host path and to the copy's own mounts, a fifo, a setuid file", side: "agent", gvisor: true, expect: "the fork holds the links as links (nothing followed), the setuid file still the sandbox user's (no-new-privileges makes the bit inert), the fifo left out; the host is untouched", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		// The copy container runs as root with CHOWN, FOWNER and
		// DAC_OVERRIDE, the source's volumes at /other/N.
		exec(t, e.m, "work", "cd $HOME && ln -sfn / root && ln -sfn "+e.sentinel+" host && ln -sfn /other/0 other && ln -sfn /src/../../etc up && "+
			"mkfifo fifo && echo x > suid && chmod 4755 suid")
		if _, err := e.m.Creator.Fork(ctx, create.ForkOptions{Source: "work", Name: "hcopy"}); err != nil {
			t.Fatal(err)
		}
		defer e.m.Delete(context.WithoutCancel(ctx), "hcopy", true)
		want := "root -> /\nhost -> " + e.sentinel + "\nother -> /other/0\nup -> /src/../../etc\nno fifo\n-rwsr-xr-x 1000\n"
		got := exec(t, e.m, "hcopy", "cd $HOME && for l in root host other up; do echo \"$l -> $(readlink $l)\"; done; "+
			"test -e fifo && echo fifo || echo no fifo; echo \"$(ls -l suid | cut -c1-10) $(stat -c %u suid)\"")
		if got != want {
			t.Errorf("the fork's home holds\n%s\nwant\n%s", got, want)
		}
		exec(t, e.m, "work", "cd $HOME && rm -f root host other up fifo suid")
	}},
	{name: "a hostile /src layer copied by fork: links to /, to a host path and to the copy's mounts, a fifo, a setuid file, a tracked file become a directory", side: "agent", gvisor: true, expect: "the fork's /src is the source's, links as links (nothing followed), the fifo left out, the setuid file the sandbox user's; the host is untouched", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		// Over a base tree the copy reads the source's upper layer, its
		// tree and its merged /src at /other/N, as root.
		exec(t, e.m, "work", "cd /src && mkdir -p lay && cd lay && ln -sfn / root && ln -sfn "+e.sentinel+" host && "+
			"ln -sfn /other/0 o0 && ln -sfn /other/1 o1 && ln -sfn /other/2 o2 && ln -sfn ../../.litterbox helper && "+
			"mkfifo fifo && echo x > suid && chmod 4755 suid && cd /src && mv README.md README.was && mkdir README.md && echo in > README.md/f && mv .gitignore .gitignore.was")
		defer exec(t, e.m, "work", "cd /src && rm -rf lay README.md && mv README.was README.md && mv .gitignore.was .gitignore")
		if _, err := e.m.Creator.Fork(ctx, create.ForkOptions{Source: "work", Name: "lcopy"}); err != nil {
			t.Fatal(err)
		}
		defer e.m.Delete(context.WithoutCancel(ctx), "lcopy", true)
		const list = `cd /src && find . | sort | while read f; do if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; ` +
			`elif [ -p "$f" ]; then echo "$f fifo"; elif [ -f "$f" ]; then echo "$f $(stat -c '%A %u' "$f") $(cat "$f" | head -c 20)"; ` +
			`else echo "$f $(stat -c '%A %u' "$f")"; fi; done`
		want := strings.Replace(exec(t, e.m, "work", list), "./lay/fifo fifo\n", "", 1)
		if got := exec(t, e.m, "lcopy", list); got != want {
			t.Errorf("the fork's /src holds\n%s\nwant the source's, but the fifo\n%s", got, want)
		}
	}},
	{name: "filling the home", side: "agent", gvisor: true, expect: "the disk guard counts the home: it trips within 30 s, write is refused, freeing space lifts it", run: func(t *testing.T, e *attackEnv) {
		localConfig(t, e.m, "[docker]\ndisk = \"4m\"\n")
		defer os.Remove(filepath.Join(e.m.Repo.Root, config.LocalFile))
		res := bash(t, e.m, "head -c 8000000 /dev/zero > $HOME/fill")
		// PID 1 measures the home beside the calls, every 30 s of use.
		for deadline := time.Now().Add(45 * time.Second); res.DiskOver == nil && time.Now().Before(deadline); {
			time.Sleep(time.Second)
			res = bash(t, e.m, "true")
		}
		if res.DiskOver == nil {
			t.Fatalf("8 MB in the home against a 4m guard, 45 s on: %+v", res)
		}
		var full *agent.DiskFullError
		if _, err := e.m.Agent.Write(context.Background(), "work", "more.txt", []byte("x")); !errors.As(err, &full) || !strings.Contains(err.Error(), "in /src and its home") {
			t.Errorf("write while over: %v", err)
		}
		if res := bash(t, e.m, "rm $HOME/fill"); res.DiskOver != nil {
			t.Errorf("still over after freeing: %+v", res.DiskOver)
		}
	}},
}

// freshRepo is a repository of its own, for the rows that commit to it,
// with a committed .litterbox.toml when toml is set, read as create reads it.
func freshRepo(t *testing.T, e *attackEnv, toml string) *Manager {
	t.Helper()
	files := testenv.Files{"README.md": "hi\n"}
	if toml != "" {
		files[config.File] = toml
	}
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbat"))
	testenv.NewRepo(t, dir, files)
	cfg, err := config.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Image = e.image
	m, err := Open(context.Background(), testenv.Exec(), engine.Docker, dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	return m
}
