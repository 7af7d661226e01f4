//go:build integration

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// objectsSize is what the host repository's object store holds in files.
func objectsSize(t *testing.T, m *Manager) int64 {
	t.Helper()
	return sizeUnder(t, filepath.Join(m.Repo.GitDir, "objects"), false)
}

// localConfig writes the user's own config file of m's repository.
func localConfig(t *testing.T, m *Manager, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(m.Repo.Root, config.LocalFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A 300 MB file is not committed, the rest of its call is, and the host's
// object store does not grow by it; raising the bound commits it. The disk
// guard counts what lies in ignored directories too, refuses the file
// tools while /src is over it, and lets go once space is freed.
func TestMatrixSnapshotBounds(t *testing.T) {
	for _, image := range shellImages {
		t.Run(imageName(image), func(t *testing.T) {
			m := matrixSandbox(t, image, testenv.Files{"README.md": "hi\n", ".gitignore": "node_modules/\n"})
			ctx := context.Background()
			before := objectsSize(t, m)
			res := bash(t, m, "head -c 300000000 /dev/zero > huge.bin && echo a > a.txt && mkdir -p sub && echo b > sub/b.txt")
			if got := tree(t, m); res.Snapshot == "" || strings.Contains(got, "huge.bin") || !strings.Contains(got, "a.txt") || !strings.Contains(got, "sub/b.txt") {
				t.Fatalf("snapshot %q holds:\n%s", res.Snapshot, got)
			}
			want := []snapshot.Withheld{{Path: "huge.bin", Size: 300000000, Limit: snapshot.LimitFile, Max: 50 << 20}}
			if !slices.Equal(res.Withheld, want) {
				t.Errorf("withheld %+v, want %+v", res.Withheld, want)
			}
			if notes := strings.Join(res.Notes(), "\n"); !strings.Contains(notes, "huge.bin (286.1 MiB) is over max-file-size (50m)") || !strings.Contains(notes, ".gitignore") || !strings.Contains(notes, "raise [snapshot] max-file-size") {
				t.Errorf("notes: %s", notes)
			}
			if grew := objectsSize(t, m) - before; grew > 1<<20 {
				t.Errorf("the host's objects grew by %d bytes", grew)
			}
			if got := strings.TrimSpace(bash(t, m, "wc -c < huge.bin").Stdout); got != "300000000" {
				t.Errorf("the sandbox's huge.bin has %s bytes", got)
			}
			if res := bash(t, m, "true"); len(res.Withheld) != 0 {
				t.Errorf("an unchanged withheld file is reported again: %+v", res.Withheld)
			}

			localConfig(t, m, "[snapshot]\nmax-file-size = \"400m\"\nmax-call-size = \"400m\"\n")
			if res := bash(t, m, "true"); res.Snapshot == "" || !strings.Contains(tree(t, m), "huge.bin") {
				t.Fatalf("raising the bound did not commit huge.bin: %+v", res)
			}

			localConfig(t, m, "[snapshot]\nmax-file-size = \"1k\"\n")
			if _, err := m.Agent.Write(ctx, "work", "w.txt", []byte(strings.Repeat("w", 2000))); err == nil || !strings.Contains(err.Error(), "over max-file-size (1k)") {
				t.Errorf("a write over max-file-size: %v", err)
			}
			if _, err := m.Agent.Edit(ctx, "work", "a.txt", one("a", strings.Repeat("e", 2000), false)); err == nil || !strings.Contains(err.Error(), "over max-file-size (1k)") {
				t.Errorf("an edit over max-file-size: %v", err)
			}
			localConfig(t, m, "[docker]\ndisk = \"1m\"\n")
			res = bash(t, m, "rm huge.bin && mkdir -p node_modules/p && head -c 2000000 /dev/zero > node_modules/p/blob")
			if res.DiskOver == nil || res.DiskOver.Used < 2000000 || res.DiskOver.Limit != 1<<20 {
				t.Fatalf("2 MB in an ignored directory, disk 1m: %+v", res.DiskOver)
			}
			var full *agent.DiskFullError
			if _, err := m.Agent.Write(ctx, "work", "w.txt", []byte("w\n")); !errors.As(err, &full) {
				t.Errorf("a write over the disk guard: %v", err)
			}
			if _, err := m.Agent.Edit(ctx, "work", "a.txt", one("a", "b", false)); !errors.As(err, &full) {
				t.Errorf("an edit over the disk guard: %v", err)
			}
			if res := bash(t, m, "true"); res.DiskOver == nil {
				t.Errorf("the guard let go with the space still taken")
			}
			if res := bash(t, m, "rm -rf node_modules"); res.DiskOver != nil {
				t.Errorf("the guard holds after the space was freed: %+v", res.DiskOver)
			}
			if w, err := m.Agent.Write(ctx, "work", "w.txt", []byte("w\n")); err != nil || w.Snapshot == "" {
				t.Errorf("a write after freeing space: %+v %v", w, err)
			}
		})
	}
}

// A file over max-file-size that the branch already holds is not news: a
// restarted sandbox's full scan hashes it instead of reporting it withheld.
func TestIntegrationBigTrackedFileAfterRestart(t *testing.T) {
	m := matrixSandbox(t, "busybox:latest", testenv.Files{"README.md": "hi\n", "data.bin": strings.Repeat("\x00", 60<<20)})
	if res := bash(t, m, "true"); len(res.Withheld) != 0 {
		t.Errorf("an untouched tracked file reported: %+v", res.Withheld)
	}
	if _, err := testenv.Docker("restart", "-t", "0", m.Repo.Names("work").Container); err != nil {
		t.Fatal(err)
	}
	res := bash(t, m, "true")
	if !res.FullScan || len(res.Withheld) != 0 || res.Snapshot != "" {
		t.Errorf("after a restart: full %v, withheld %+v, snapshot %q", res.FullScan, res.Withheld, res.Snapshot)
	}
	res = bash(t, m, "echo x >> data.bin")
	if len(res.Withheld) != 1 || !res.Withheld[0].Tracked || !strings.Contains(strings.Join(res.Notes(), "\n"), "the branch keeps its last committed version") {
		t.Errorf("a changed tracked file over the bound: %+v", res.Withheld)
	}
}

// Changes made between calls past max-call-size: their snapshot commits
// what fits and the result says the rest waits; the call after commits the
// rest (a rescan), though no file changed meanwhile.
func TestIntegrationBetweenCallsOverTheCallBudget(t *testing.T) {
	m := matrixSandbox(t, "busybox:latest", testenv.Files{"README.md": "hi\n"})
	localConfig(t, m, "[snapshot]\nmax-file-size = \"1m\"\nmax-call-size = \"2m\"\n")
	exec(t, m, "work", "mkdir -p d && for i in 1 2 3 4 5 6; do head -c 900000 /dev/urandom > d/f$i; done")
	res := bash(t, m, "echo call > call.txt")
	if res.Between.Commit == "" || res.Between.Paths == 0 || res.Between.Paths >= 6 || changedIn(t, m, res.Snapshot) != "call.txt" {
		t.Fatalf("between %+v, call's snapshot holds %q", res.Between, changedIn(t, m, res.Snapshot))
	}
	if notes := strings.Join(res.Notes(), "\n"); !strings.Contains(notes, "max-call-size") {
		t.Errorf("no note of the files that wait: %q", notes)
	}
	for i := 0; i < 6 && strings.Count(tree(t, m), "d/f") < 6; i++ {
		bash(t, m, "true")
	}
	if n := strings.Count(tree(t, m), "d/f"); n != 6 {
		t.Errorf("after later calls the branch holds %d of the 6 files", n)
	}
}
