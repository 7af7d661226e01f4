//go:build integration

package sandbox

import (
	"context"
	"crypto/md5"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// srcListing prints /src as branchListing prints the branch.
func srcListing(t *testing.T, m *Manager) string {
	return bash(t, m, `find . \( -name node_modules -o -name .git \) -prune -o \( -type f -o -type l \) -print | sed 's|^\./||' | sort | while IFS= read -r f; do if [ -L "$f" ]; then printf '%s -> %s\n' "$f" "$(readlink "$f")"; else printf '%s %s\n' "$f" "$(cat "$f" | tr '\n' '|')"; fi; done`).Stdout
}

// A sync moves the sandbox onto the user's moved branch: its commits on
// top, /src equal to the branch, its ignored files, home and running
// services kept, the
// host untouched; a second sync changes nothing. A conflict leaves its
// markers in /src and in a commit that names the file.
func TestIntegrationSync(t *testing.T) {
	for _, image := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(imageName(image), func(t *testing.T) {
			ctx := context.Background()
			files := testenv.Files{".gitignore": "node_modules/\n", "a.txt": "1\n2\n3\n4\n5\n", "b.txt": "b\n", "d/gone.txt": "g\n"}
			m := matrixSandbox(t, image, files)
			bash(t, m, `mkdir -p node_modules && echo dep > node_modules/x && echo home > "$HOME/h" && sed -i s/1/ONE/ a.txt && echo new > n.txt`)
			svc, err := servicectl.Background(ctx, m.Repo, "work", "sleeper", agent.BashOptions{Command: "sleep 600"})
			if err != nil || svc.PID == 0 {
				t.Fatalf("a service of the agent's: %+v %v", svc, err)
			}
			// The user moves main: a change to another line, a removal, a new file.
			root := m.Repo.Root
			if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("1\n2\n3\n4\nMAIN\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "main.txt"), []byte("m\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			testenv.Git(t, root, "rm", "-q", "-r", "d")
			testenv.Git(t, root, "add", "-A")
			testenv.Git(t, root, "commit", "-q", "-m", "main moves")
			head := testenv.Git(t, root, "rev-parse", "HEAD")
			before := hostState(t, m)

			s, err := m.Sync(ctx, "work", SyncOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if s.Replayed != 1 || len(s.Conflicts) != 0 || s.Onto != head {
				t.Fatalf("sync: %+v", s)
			}
			if got := testenv.Git(t, root, "rev-parse", "litterbox/work~1"); got != head {
				t.Errorf("the branch is not one commit on main: its parent is %s", got)
			}
			if got, want := branchListing(t, m), srcListing(t, m); got != want {
				t.Errorf("after the sync the branch differs from /src:\n got:\n%s\nwant:\n%s", got, want)
			}
			if got := bash(t, m, fmt.Sprintf(`cat a.txt node_modules/x "$HOME/h"; test -e d || echo no-d; kill -0 %d && echo running`, svc.PID)).Stdout; got != "ONE\n2\n3\n4\nMAIN\ndep\nhome\nno-d\nrunning\n" {
				t.Errorf("after the sync /src holds %q", got)
			}
			if after := hostState(t, m); after != before {
				t.Errorf("the host's repository changed:\n%s\nnow\n%s", before, after)
			}
			if d := testenv.Git(t, root, "diff", "--name-only", "HEAD", "litterbox/work"); d != "a.txt\nn.txt" {
				t.Errorf("the review after the sync shows %q", d)
			}
			list, err := m.List(ctx, false)
			if err != nil || len(list) != 1 || list[0].Base != head || list[0].CommitsAhead == nil || *list[0].CommitsAhead != 1 {
				t.Errorf("list after the sync does not start the sandbox at main: %+v %v", list, err)
			}
			if again, err := m.Sync(ctx, "work", SyncOptions{}); err != nil || !again.UpToDate {
				t.Errorf("a second sync: %+v %v", again, err)
			}

			// A conflict: main changes the line the sandbox changed.
			if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("MINE\n2\n3\n4\nMAIN\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			testenv.Git(t, root, "commit", "-q", "-am", "main changes the first line")
			before = hostState(t, m)
			s, err = m.Sync(ctx, "work", SyncOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Conflicts) != 1 || s.Conflicts[0] != "a.txt" {
				t.Fatalf("conflicts %q", s.Conflicts)
			}
			if got := bash(t, m, "cat a.txt").Stdout; !strings.Contains(got, "<<<<<<<") || !strings.Contains(got, "MINE") || !strings.Contains(got, "ONE") {
				t.Errorf("a.txt in /src holds no conflict: %q", got)
			}
			if msg := testenv.Git(t, root, "log", "-1", "--format=%B", "litterbox/work"); !strings.Contains(msg, "conflicts in 1 file") || !strings.Contains(msg, "  a.txt") {
				t.Errorf("the conflict commit says %q", msg)
			}
			if got, want := branchListing(t, m), srcListing(t, m); got != want {
				t.Errorf("after the conflicting sync the branch differs from /src:\n got:\n%s\nwant:\n%s", got, want)
			}
			if after := hostState(t, m); after != before {
				t.Errorf("the host's repository changed:\n%s\nnow\n%s", before, after)
			}
		})
	}
}

// A sync stopped half-way (killed after the branch moved, before /src
// was brought) loses nothing and leaves no difference: the state it
// marked first makes the next call read the branch afresh and scan all of
// /src, and its snapshot makes the branch equal /src again.
func TestIntegrationSyncStoppedHalfWay(t *testing.T) {
	m := matrixSandbox(t, "busybox:latest", testenv.Files{"a.txt": "a\n", "b.txt": "b\n"})
	bash(t, m, "echo mine > mine.txt")
	root := m.Repo.Root
	old := testenv.Git(t, root, "rev-parse", "litterbox/work")
	// What a sync had done when it was killed: the branch moved to a tip
	// /src never got (b.txt changed, c.txt new), the state marked.
	testenv.Git(t, root, "checkout", "-q", "-b", "elsewhere", old)
	if err := os.WriteFile(filepath.Join(root, "b.txt"), []byte("B\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "c.txt"), []byte("c\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, root, "add", "-A")
	testenv.Git(t, root, "commit", "-q", "-m", "the tip /src never got")
	moved := testenv.Git(t, root, "rev-parse", "HEAD")
	testenv.Git(t, root, "checkout", "-q", "-")
	testenv.Git(t, root, "update-ref", "refs/heads/litterbox/work", moved, old)
	st, err := m.Repo.LoadSnap("work")
	if err != nil {
		t.Fatal(err)
	}
	st.Tip, st.TipTree, st.Rescan = "", "", true
	if err := m.Repo.SaveSnap("work", st); err != nil {
		t.Fatal(err)
	}
	bash(t, m, "echo after > after.txt")
	if got, want := branchListing(t, m), srcListing(t, m); got != want {
		t.Errorf("after the stopped sync the branch differs from /src:\n got:\n%s\nwant:\n%s", got, want)
	}
	if got := testenv.Git(t, root, "cat-file", "blob", "litterbox/work:mine.txt"); got != "mine" {
		t.Errorf("the sandbox's own work: %q", got)
	}
}

// A sync that brings 3,000 files in 30 directories and removes a
// directory leaves /src with exactly the branch's files, byte for byte,
// on busybox and Debian.
func TestIntegrationSyncManyFiles(t *testing.T) {
	for _, image := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(imageName(image), func(t *testing.T) {
			m := matrixSandbox(t, image, testenv.Files{"a.txt": "a\n", "old/x.txt": "x\n", "old/y.txt": "y\n"})
			bash(t, m, "echo mine > mine.txt")
			root := m.Repo.Root
			for d := 0; d < 30; d++ {
				dir := filepath.Join(root, "big", fmt.Sprintf("d%02d", d))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				for f := 0; f < 100; f++ {
					if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d", f)), []byte(fmt.Sprintf("%d/%d\n", d, f)), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			testenv.Git(t, root, "rm", "-q", "-r", "old")
			testenv.Git(t, root, "add", "-A")
			testenv.Git(t, root, "commit", "-q", "-m", "3,000 files")
			s, err := m.Sync(context.Background(), "work", SyncOptions{})
			if err != nil || s.Note != "" {
				t.Fatalf("sync: %+v %v", s, err)
			}
			files := testenv.Git(t, root, "ls-tree", "-r", "--name-only", "litterbox/work")
			// The listing, hashed: a bash result keeps 32 KiB of its output.
			inSrc := bash(t, m, `find . -path ./.git -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort | md5sum | cut -d' ' -f1`).Stdout
			if host := fmt.Sprintf("%x\n", md5.Sum([]byte(files+"\n"))); inSrc != host {
				t.Errorf("the paths in /src differ from the branch's %d", strings.Count(files, "\n")+1)
			}
			sum := bash(t, m, `find big -type f | LC_ALL=C sort | xargs cat | md5sum | cut -d' ' -f1`).Stdout
			var want strings.Builder
			for d := 0; d < 30; d++ {
				for f := 0; f < 100; f++ {
					fmt.Fprintf(&want, "%d/%d\n", d, f)
				}
			}
			if host := fmt.Sprintf("%x\n", md5.Sum([]byte(want.String()))); sum != host {
				t.Errorf("the contents of big/ in /src differ from the branch's: %s against %s", sum, host)
			}
		})
	}
}
