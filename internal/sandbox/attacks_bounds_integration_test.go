//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/audit"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/milestone"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// boundsAttacks are the attack table's rows for bytes that reach the host (issue 27, items 8-9).
var boundsAttacks = []attack{
	{name: "deep directories to grow the host's objects and ignore mirror", side: "agent", expect: "each call adds at most max-call-size to .git/objects and nothing to the ignore mirror; the rest waits and later calls commit it", run: func(t *testing.T, e *attackEnv) {
		const bound = 1 << 20
		r := boundsRepo(t, e, "[snapshot]\nmax-file-size = \"1m\"\nmax-call-size = \"1m\"\n")
		objects, mirror := filepath.Join(r.Repo.GitDir, "objects"), r.Repo.Layout().Ignore("work")
		objBefore, mirrorBefore := apparentSize(t, objects), apparentSize(t, mirror)
		start := time.Now()
		// 200 one-line files, each 150 directories deep in a chain of its
		// own: 30,000 directories, 30,000 tree objects if all committed.
		res := bashIn(t, r, `p=$(printf 'd/%.0s' $(seq 149)); for i in $(seq 200); do mkdir -p c$i/$p && echo $i > c$i/${p}f || exit 1; done`)
		first := time.Since(start)
		files := countFiles(t, r)
		objGrew, mirrorGrew := apparentSize(t, objects)-objBefore, apparentSize(t, mirror)-mirrorBefore
		t.Logf("first call (%v): %d file(s) committed, .git/objects +%d bytes, ignore mirror +%d bytes, %d withheld (+%d more)", first, files, objGrew, mirrorGrew, len(res.Withheld), res.WithheldMore)
		if res.Snapshot == "" || files < 1 || files >= 200 {
			t.Fatalf("the first call committed %d of the 200 files (snapshot %q); want some, within the bound", files, res.Snapshot)
		}
		if objGrew > bound || mirrorGrew > bound {
			t.Errorf("one call grew .git/objects by %d and the ignore mirror by %d bytes; the bound is %d", objGrew, mirrorGrew, bound)
		}
		if res.WithheldMore+len(res.Withheld) != 200-files || !strings.Contains(strings.Join(res.Notes(), "\n"), "past max-call-size") {
			t.Errorf("withheld %d (+%d), notes %q; want the %d waiting files reported", len(res.Withheld), res.WithheldMore, res.Notes(), 200-files)
		}
		for i := 0; i < 2; i++ {
			before, had := apparentSize(t, objects), files
			res := bashIn(t, r, "true")
			files = countFiles(t, r)
			grew := apparentSize(t, objects) - before
			t.Logf("call %d: %d file(s) committed in all, .git/objects +%d bytes", i+2, files, grew)
			if res.Snapshot == "" || files <= had || grew > bound {
				t.Errorf("a later call committed %d more file(s), grew .git/objects by %d bytes; want more within %d", files-had, grew, bound)
			}
		}
		if grew := apparentSize(t, mirror) - mirrorBefore; grew > bound {
			t.Errorf("the ignore mirror grew by %d bytes", grew)
		}
	}},
	{name: "a 30 MB milestone message and a 1 MB command", side: "agent", expect: "the milestone is refused in one line; a command's commit and audit entry keep 4 KiB of it with size and digest", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := boundsRepo(t, e, "")
		auditBefore := fileSize(r.Repo.AuditPath())
		huge := strings.Repeat("m", 30<<20)
		trail := &runner.Trail{}
		_, err := milestone.Make(runner.WithTrail(ctx, trail), r.Repo, "work", huge)
		if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "over the 4096") {
			t.Errorf("a 30 MB milestone message: %v", err)
		}
		logCall(t, r, "sandbox-milestone", map[string]any{"sandbox": "work", "message": huge}, trail, err)
		// Linux takes no argument over 128 KiB (MAX_ARG_STRLEN): a 1 MB
		// command reaches the sandbox and is refused there, but its record
		// is made all the same; one of 120 KB runs and commits.
		for _, n := range []int{1 << 20, 120_000} {
			cmd := "echo ran > ran.txt; true #" + strings.Repeat("x", n)
			trail = &runner.Trail{}
			res, err := r.Agent.Bash(runner.WithTrail(ctx, trail), "work", agent.BashOptions{Command: cmd})
			logCall(t, r, "bash", map[string]any{"sandbox": "work", "command": cmd}, trail, err)
			if err != nil {
				t.Fatalf("a command of %d bytes: %v", len(cmd), err)
			}
			if n == 1<<20 {
				continue
			}
			if res.ExitCode != 0 || res.Snapshot == "" {
				t.Fatalf("a command of %d bytes did not run and commit: %+v", len(cmd), res)
			}
			checkCommit(t, r, res.Snapshot, len(cmd))
		}
		grew := fileSize(r.Repo.AuditPath()) - auditBefore
		t.Logf("audit.jsonl +%d bytes for three entries (30 MB, 1 MB and 120 KB of text)", grew)
		if grew > 64<<10 {
			t.Errorf("audit.jsonl grew by %d bytes for a 30 MB message and two long commands", grew)
		}
		if ok, err := milestone.Make(ctx, r.Repo, "work", "a summary"); err != nil || ok.Squashed != 1 {
			t.Errorf("a short milestone after: %+v %v", ok, err)
		}
	}},
	{name: "a secret's value in a milestone message, file and directory names, and read back", side: "agent", expect: "commits hold it masked and no path holds it; read, grep, ls and glob show it masked; the other changes commit", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		variable := strings.ToUpper(strings.ReplaceAll(testenv.UniqueName("LB_ATK"), "-", "_"))
		value := "s3cr3t-" + testenv.UniqueName("v")
		t.Setenv(variable, value)
		secretsToml := "[secrets]\nTOKEN = { env = \"" + variable + "\" }\n"
		r := boundsRepo(t, e, secretsToml)
		res := bashIn(t, r, `mkdir "d-$TOKEN" && echo x > "d-$TOKEN/f" && echo y > "n-$TOKEN.txt" && mkdir -p docs && echo "key=$TOKEN" > docs/data.txt && echo ok > ok.txt`)
		if res.Snapshot == "" || !strings.Contains(tree(t, r), "ok.txt") {
			t.Fatalf("the other changes were not committed: %+v\n%s", res, tree(t, r))
		}
		inName := 0
		for _, w := range res.Withheld {
			if strings.Contains(w.Path, value) {
				t.Errorf("the result names %q unmasked", w.Path)
			}
			if w.InName && w.Secret == "TOKEN" {
				inName++
			}
		}
		if inName != 2 || !strings.Contains(strings.Join(res.Notes(), "\n"), "holds the value of secret TOKEN (shown masked)") {
			t.Errorf("withheld %+v, notes %q; want both paths named masked", res.Withheld, res.Notes())
		}
		if _, err := milestone.Make(ctx, r.Repo, "work", "done with "+value); err != nil {
			t.Fatal(err)
		}
		history := testenv.Git(t, r.Repo.Root, "log", "--format=%B", "litterbox/work") + testenv.Git(t, r.Repo.Root, "log", "--name-only", "--format=", "litterbox/work")
		if strings.Contains(history, value) || !strings.Contains(history, "done with ***") {
			t.Errorf("the branch's messages or paths hold the value:\n%s", history)
		}
		var seen strings.Builder
		rd, err := r.Agent.Read(ctx, "work", "docs/data.txt", 0, 0)
		if err != nil || rd.Content != "key=***\n" {
			t.Errorf("read: %+v %v", rd, err)
		}
		ms, _, err := r.Agent.Grep(ctx, "work", "key=|x", ".", "")
		if err != nil || len(ms) < 2 {
			t.Errorf("grep: %+v %v", ms, err)
		}
		ls, _, err := r.Agent.Ls(ctx, "work", ".", true)
		if err != nil || len(ls) < 4 {
			t.Errorf("ls: %+v %v", ls, err)
		}
		globbed, _, err := r.Agent.Glob(ctx, "work", "**", ".")
		if err != nil {
			t.Error(err)
		}
		fmt.Fprintf(&seen, "%+v %+v %+v %v", rd, ms, ls, globbed)
		if strings.Contains(seen.String(), value) || !strings.Contains(seen.String(), "d-***/f") || !strings.Contains(seen.String(), "n-***.txt") {
			t.Errorf("what read, grep, ls and glob return holds the value or lacks the masked names:\n%s", seen.String())
		}
	}},
	{name: "copies of branch files a fetched file could not pass: one holding a secret's value, one over max-file-size", side: "agent", expect: "10 copies of each are withheld as each original would be (secret TOKEN; max-file-size), though their content is on the branch; a moved directory beside them commits", run: func(t *testing.T, e *attackEnv) {
		variable := strings.ToUpper(strings.ReplaceAll(testenv.UniqueName("LB_ATK"), "-", "_"))
		value := "s3cr3t-" + testenv.UniqueName("v")
		t.Setenv(variable, value)
		r := freshRepo(t, e, "")
		// The user committed them; the bounds and the secret came later.
		writeFile(t, filepath.Join(r.Repo.Root, "vault.txt"), "token="+value+"\n")
		writeFile(t, filepath.Join(r.Repo.Root, "big.bin"), strings.Repeat("b", 4<<10))
		if err := os.Mkdir(filepath.Join(r.Repo.Root, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			writeFile(t, filepath.Join(r.Repo.Root, "d", fmt.Sprintf("%d.txt", i)), fmt.Sprintf("plain %d\n", i))
		}
		testenv.Git(t, r.Repo.Root, "add", "-A")
		testenv.Git(t, r.Repo.Root, "commit", "-q", "-m", "vault, big, d")
		localConfig(t, r, "[snapshot]\nmax-file-size = \"1k\"\n[secrets]\nTOKEN = { env = \""+variable+"\" }\n")
		cfg, err := config.Load(r.Repo.Root)
		if err != nil {
			t.Fatal(err)
		}
		r.Repo.Config.Secrets, r.Repo.Config.MaxFileSize = cfg.Secrets, cfg.MaxFileSize
		if _, err := r.Create(context.Background(), create.CreateOptions{Name: "work"}); err != nil {
			t.Fatal(err)
		}
		res := bashIn(t, r, "for i in 0 1 2 3 4 5 6 7 8 9; do cp vault.txt v$i.txt; cp big.bin b$i.bin; done; mv d moved")
		limits := map[string]int{}
		for _, w := range res.Withheld {
			limits[w.Limit+" "+w.Secret]++
		}
		if limits["secret TOKEN"] != 10 || limits["max-file-size "] != 10 || len(res.Withheld) != 20 {
			t.Errorf("withheld %+v; want the 10 copies of each", res.Withheld)
		}
		tr := tree(t, r)
		if strings.Contains(tr, "v0.txt") || strings.Contains(tr, "b0.bin") || !strings.Contains(tr, "moved/9.txt") || strings.Contains(tr, " d/9.txt") {
			t.Errorf("the branch holds:\n%s", tr)
		}
	}},
	{name: "a secret's value in one of 100 new files (a call large enough to store its files through fast-import)", side: "agent", expect: "that file is withheld naming TOKEN and no object of it is in the repository; the 99 others commit", run: func(t *testing.T, e *attackEnv) {
		variable := strings.ToUpper(strings.ReplaceAll(testenv.UniqueName("LB_ATK"), "-", "_"))
		value := "s3cr3t-" + testenv.UniqueName("v")
		t.Setenv(variable, value)
		r := boundsRepo(t, e, "[secrets]\nTOKEN = { env = \""+variable+"\" }\n")
		res := bashIn(t, r, `mkdir many && i=0; while [ $i -lt 99 ]; do echo "file $i" > many/f$i.txt; i=$((i+1)); done; echo "key=$TOKEN" > many/leak.txt`)
		if len(res.Withheld) != 1 || res.Withheld[0].Path != "many/leak.txt" || res.Withheld[0].Secret != "TOKEN" {
			t.Errorf("withheld %+v", res.Withheld)
		}
		if n := strings.Count(tree(t, r), "many/f"); n != 99 {
			t.Errorf("%d of the 99 files committed", n)
		}
		sum := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00key=%s\n", len(value)+5, value)))
		if _, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "git", Args: []string{"-C", r.Repo.Root, "cat-file", "-e", hex.EncodeToString(sum[:])}}); err == nil {
			t.Error("the repository holds a blob of the file with the secret")
		}
	}},
	{name: "100 new files under an LFS filter in one call (large enough to store its files through fast-import)", side: "agent", expect: "each is committed as an LFS pointer, as git add stores it; no object of any file's raw content is in the repository", run: func(t *testing.T, e *attackEnv) {
		r := freshRepo(t, e, "")
		testenv.Git(t, r.Repo.Root, "lfs", "install", "--local")
		writeFile(t, filepath.Join(r.Repo.Root, ".gitattributes"), "*.bin filter=lfs diff=lfs merge=lfs -text\n")
		testenv.Git(t, r.Repo.Root, "add", "-A")
		testenv.Git(t, r.Repo.Root, "commit", "-q", "-m", "lfs")
		if _, err := r.Create(context.Background(), create.CreateOptions{Name: "work"}); err != nil {
			t.Fatal(err)
		}
		bashIn(t, r, `mkdir big && i=0; while [ $i -lt 100 ]; do printf 'raw\000%d' $i > big/f$i.bin; i=$((i+1)); done`)
		for _, i := range []int{0, 57, 99} {
			if got := testenv.Git(t, r.Repo.Root, "show", fmt.Sprintf("litterbox/work:big/f%d.bin", i)); !strings.HasPrefix(got, "version https://git-lfs.github.com/spec/v1") {
				t.Errorf("big/f%d.bin committed as %q, not an LFS pointer", i, got)
			}
			raw := fmt.Sprintf("raw\x00%d", i)
			sum := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(raw), raw)))
			if _, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "git", Args: []string{"-C", r.Repo.Root, "cat-file", "-e", hex.EncodeToString(sum[:])}}); err == nil {
				t.Errorf("the repository holds big/f%d.bin's raw content as an object", i)
			}
		}
		if n := strings.Count(tree(t, r), "big/f"); n != 100 {
			t.Errorf("%d of the 100 files committed", n)
		}
	}},
	{name: "a secret of several lines read in parts", side: "agent", expect: "read of some of its lines, from its start, middle or end, and grep of one line show them masked", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		variable := strings.ToUpper(strings.ReplaceAll(testenv.UniqueName("LB_KEY"), "-", "_"))
		lines := []string{"-----BEGIN TEST KEY-----", "QUJDREVGR0hJSktMTU5PUA" + strings.ReplaceAll(testenv.UniqueName("k"), "-", ""), "UVJTVFVWV1hZWjAxMjM0NTY3", "-----END TEST KEY-----"}
		t.Setenv(variable, strings.Join(lines, "\n")+"\n")
		r := boundsRepo(t, e, "[secrets]\nKEY = { env = \""+variable+"\" }\n")
		bashIn(t, r, `{ echo before; printf %s "$KEY"; echo after; } > notes.txt`)
		var seen strings.Builder
		for _, c := range []struct{ offset, limit int }{{0, 3}, {2, 2}, {3, 3}, {0, 0}} {
			rd, err := r.Agent.Read(ctx, "work", "notes.txt", c.offset, c.limit)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&seen, "read %d+%d: %q\n", c.offset, c.limit, rd.Content)
		}
		ms, _, err := r.Agent.Grep(ctx, "work", "QUJD|UVJT", ".", "")
		if err != nil || len(ms) != 2 {
			t.Fatalf("grep: %+v %v", ms, err)
		}
		fmt.Fprintf(&seen, "grep: %+v\n", ms)
		for _, l := range lines[1:3] {
			if strings.Contains(seen.String(), l) {
				t.Errorf("a line of the key came back unmasked:\n%s", seen.String())
			}
		}
		if !strings.Contains(seen.String(), "before") || !strings.Contains(seen.String(), "after") {
			t.Errorf("the lines around the key are missing:\n%s", seen.String())
		}
	}},
	{name: "terminal escapes in a service's log", side: "agent", expect: "service logs prints OSC 52 and a screen clear as escapes, --raw as they are", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := freshRepo(t, e, "")
		r.Repo.Config.Services = map[string]config.ServiceSpec{"noisy": {Command: []string{"sh", "-c", `printf '\033]52;c;aGk=\007\033[2J\302\233done\n'; exec sleep 600`}, Stop: "TERM", StopTimeout: 2}}
		if _, err := r.Create(ctx, create.CreateOptions{Name: "work"}); err != nil {
			t.Fatal(err)
		}
		var escaped, raw bytes.Buffer
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			escaped.Reset()
			if err := servicectl.Logs(ctx, r.Repo, "work", "noisy", 0, false, &escaped); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(escaped.String(), "done") || time.Now().After(deadline) {
				break
			}
		}
		if err := servicectl.Logs(ctx, r.Repo, "work", "noisy", 0, true, &raw); err != nil {
			t.Fatal(err)
		}
		if want := `\x1b]52;c;aGk=\x07\x1b[2J\u009bdone`; !strings.Contains(escaped.String(), want) || bytes.ContainsAny(escaped.Bytes(), "\x1b\x07\u009b") {
			t.Errorf("service logs printed %q, want %q and no control character", escaped.String(), want)
		}
		if !strings.Contains(raw.String(), "\x1b]52;c;aGk=\x07\x1b[2J\u009bdone\n") {
			t.Errorf("service logs --raw printed %q", raw.String())
		}
	}},
}

// boundsRepo is a repository of its own with the sandbox "work", local
// config toml (the user's own, so bounds and secrets it sets are trusted).
func boundsRepo(t *testing.T, e *attackEnv, toml string) *Manager {
	t.Helper()
	r := freshRepo(t, e, "")
	if toml != "" {
		localConfig(t, r, toml)
		cfg, err := config.Load(r.Repo.Root)
		if err != nil {
			t.Fatal(err)
		}
		r.Repo.Config.Secrets, r.Repo.Config.MaxFileSize, r.Repo.Config.MaxCallSize = cfg.Secrets, cfg.MaxFileSize, cfg.MaxCallSize
	}
	if _, err := r.Create(context.Background(), create.CreateOptions{Name: "work"}); err != nil {
		t.Fatal(err)
	}
	return r
}

// checkCommit checks that the snapshot commit of a command of n bytes
// keeps at most 8 KiB and says it was cut.
func checkCommit(t *testing.T, m *Manager, commit string, n int) {
	t.Helper()
	size, _ := strconv.Atoi(testenv.Git(t, m.Repo.Root, "cat-file", "-s", commit))
	t.Logf("commit object of a %d-byte command: %d bytes", n, size)
	if size > 8<<10 {
		t.Errorf("the commit object of a %d-byte command is %d bytes", n, size)
	}
	if msg := testenv.Git(t, m.Repo.Root, "log", "-1", "--format=%B", commit); !strings.Contains(msg, fmt.Sprintf("(cut: %d bytes in all, sha256 ", n)) {
		t.Errorf("the message does not say it was cut: %q", msg[max(0, len(msg)-200):])
	}
}

func bashIn(t *testing.T, m *Manager, cmd string) *result.Act {
	t.Helper()
	res, err := m.Agent.Bash(context.Background(), "work", agent.BashOptions{Command: cmd, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("bash exited %d: %s", res.ExitCode, res.Stderr)
	}
	return res
}

// logCall appends the entry the MCP server's audit middleware writes for a
// call.
func logCall(t *testing.T, m *Manager, tool string, args map[string]any, trail *runner.Trail, callErr error) {
	t.Helper()
	e := audit.Entry{Time: time.Now().UTC(), Tool: tool, Sandbox: "work", Arguments: audit.ElideArguments(args), Status: "ok", Commands: trail.Commands()}
	if callErr != nil {
		e.Status, e.Error = "error", callErr.Error()
	}
	if err := m.Repo.AppendAudit(e); err != nil {
		t.Fatal(err)
	}
}

// apparentSize is what du -sb says of dir: the sizes of its files and
// directories.
func apparentSize(t *testing.T, dir string) int64 {
	t.Helper()
	return sizeUnder(t, dir, true)
}

// sizeUnder adds up the sizes of the files under dir, and of its
// directories too with dirs; a dir not made yet holds nothing.
func sizeUnder(t *testing.T, dir string, dirs bool) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() && !dirs {
			return nil
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

func countFiles(t *testing.T, m *Manager) int {
	return strings.Count(testenv.Git(t, m.Repo.Root, "ls-tree", "-r", "--name-only", "litterbox/work"), "/f")
}
