//go:build integration

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// classAttacks are rows for the classes a hostile pass found holding, kept
// so that they keep holding: races on the links a transfer meets, the warm
// pool across repositories, and names that read as options or shell.
var classAttacks = []attack{
	{name: "a download racing a link swapped in and out under its source", side: "agent", expect: "each download copies what it finds, links as links: nothing lands in the host directory the link names, and nothing outside DEST", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r, _ := reviewRepo(t, e)
		target := t.TempDir() // the host directory the agent's link names
		if _, err := servicectl.Background(ctx, r.Repo, "w", "swapper", agent.BashOptions{Command: "mkdir -p out; while :; do rm -rf out/d; ln -s " + target + " out/d; rm -f out/d; mkdir -p out/d; echo x > out/d/f; done"}); err != nil {
			t.Fatal(err)
		}
		dests := t.TempDir()
		copied := 0
		for i := range 20 {
			dest := filepath.Join(dests, "dl", strings.Repeat("i", i+1))
			if _, err := r.Agent.Download(ctx, "w", "/src/out", dest); err == nil {
				copied++
			}
		}
		if copied == 0 {
			t.Fatal("no download succeeded, so this row tests nothing")
		}
		if left, _ := os.ReadDir(target); len(left) > 0 {
			t.Errorf("a download wrote through the agent's link into %s: %v", target, left)
		}
		_ = filepath.Walk(dests, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode()&os.ModeSymlink != 0 {
				if to, _ := os.Readlink(p); to != target {
					t.Errorf("%s links to %s", p, to)
				}
			}
			return nil
		})
	}},
	{name: "an upload racing a link to the helper's directory swapped in and out at its destination", side: "agent", expect: "an upload writes only where the sandbox's user may (never into /.litterbox, which stays as delivered), and nothing on the host changes", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r, _ := reviewRepo(t, e)
		helperDir := exec(t, r, "w", "ls -laR /.litterbox")
		if _, err := servicectl.Background(ctx, r.Repo, "w", "swapper", agent.BashOptions{Command: "while :; do rm -rf /src/up; ln -s /.litterbox /src/up; rm -f /src/up; mkdir -p /src/up; done"}); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(t.TempDir(), "payload")
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(src, "uploaded.txt"), "from the host\n")
		landed := 0
		for range 20 {
			if _, err := r.Agent.Upload(ctx, "w", src, "/src/up/payload"); err == nil {
				landed++
			}
		}
		if landed == 0 {
			t.Fatal("no upload succeeded, so this row tests nothing")
		}
		if got := exec(t, r, "w", "ls -laR /.litterbox"); got != helperDir {
			t.Errorf("an upload changed /.litterbox:\nbefore:\n%s\nafter:\n%s", helperDir, got)
		}
	}},
	{name: "a warm pool entry of another repository", side: "engine", expect: "a create in the second repository never claims the first's entry, which stays for the first", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		a, b := freshRepo(t, e, ""), freshRepo(t, e, "")
		a.Repo.Config.PoolSize, b.Repo.Config.PoolSize = 1, 1
		st, err := a.Creator.FillPool(ctx)
		if err != nil || len(st.Ready) != 1 {
			t.Fatalf("fill: %+v %v", st, err)
		}
		entry := st.Ready[0]
		c, err := b.Create(ctx, create.CreateOptions{Name: "other"})
		if err != nil {
			t.Fatal(err)
		}
		if c.Pool == entry {
			t.Fatalf("the second repository's create claimed the first's entry %s", entry)
		}
		if out, _ := testenv.Docker("ps", "-q", "--filter", "name=^"+entry+"$"); out == "" {
			t.Errorf("the first repository's entry %s is gone", entry)
		}
	}},
	{name: "names that read as options, shell or paths", side: "agent", expect: "each is refused or made a plain slug; no shell runs any of it (no marker file), and every branch made is litterbox/<slug>", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := freshRepo(t, e, "")
		marker := filepath.Join(t.TempDir(), "pwned")
		slugRE := regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
		made, refused := 0, 0
		for _, name := range []string{"-rf", "--help", "$(touch " + marker + ")", "`touch " + marker + "`", "a;touch " + marker, "..", "../x", "x\n--y", "-"} {
			c, err := r.Create(ctx, create.CreateOptions{Name: name})
			if err != nil {
				refused++
				continue
			}
			made++
			if !slugRE.MatchString(c.Name) || c.Branch != "litterbox/"+c.Name {
				t.Errorf("%q became sandbox %q on %q", name, c.Name, c.Branch)
			}
			if _, err := r.Delete(ctx, c.Name, true); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(marker); err == nil {
			t.Error("a name ran as shell")
		}
		t.Logf("%d names made plain slugs, %d refused", made, refused)
		if refs := testenv.Git(t, r.Repo.Root, "for-each-ref", "--format=%(refname)"); strings.Contains(refs, "litterbox/-") || strings.Contains(refs, "..") {
			t.Errorf("refs made: %s", refs)
		}
	}},
}
