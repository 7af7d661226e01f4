package forecast

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// benchRepo is a repository of 200 files with n sandbox branches from its
// first commit, each changing 3 of the same 40 files (so that some pairs
// overlap and some of those conflict), and a main that moved by one commit
// on 3 of them.
func benchRepo(b *testing.B, n int) (dir, target string, works []Work) {
	b.Helper()
	files := testenv.Files{}
	for i := range 200 {
		files[fmt.Sprintf("f%03d.txt", i)] = fmt.Sprintf("line %d\n", i)
	}
	dir = testenv.NewRepo(b, filepath.Join(b.TempDir(), "repo"), files)
	base := testenv.Git(b, dir, "rev-parse", "HEAD")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range n {
		change := map[string]string{}
		for range 3 {
			change[fmt.Sprintf("f%03d.txt", rng.IntN(40))] = fmt.Sprintf("sandbox %d\n", i)
		}
		works = append(works, Work{Name: fmt.Sprintf("s%02d", i), Base: base, Tip: branch(b, dir, fmt.Sprintf("s%02d", i), base, change)})
	}
	for i := range 3 {
		writeFile(b, filepath.Join(dir, fmt.Sprintf("f%03d.txt", i*7)), "main moved\n")
	}
	testenv.Git(b, dir, "commit", "-q", "-am", "main moves")
	return dir, testenv.Git(b, dir, "rev-parse", "HEAD"), works
}

// BenchmarkTell is a forecast of 10 and of 50 sandboxes: cold (no cache:
// after a restart, or every tip moved) and warm (the tips as last time,
// as list and watch ask again); floor is one git merge-tree of one pair,
// run bare, what the cold forecast runs once per overlapping pair.
func BenchmarkTell(b *testing.B) {
	for _, n := range []int{10, 50} {
		dir, target, works := benchRepo(b, n)
		g := gitcli.New(dir, testenv.Exec())
		b.Run(fmt.Sprintf("cold/%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := (&Teller{Git: g, Cache: OpenCache("")}).Tell(context.Background(), target, works); err != nil {
					b.Fatal(err)
				}
			}
		})
		warm := OpenCache("")
		if _, err := (&Teller{Git: g, Cache: warm}).Tell(context.Background(), target, works); err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("warm/%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := (&Teller{Git: g, Cache: warm}).Tell(context.Background(), target, works); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("floor-one-merge-tree/%d", n), func(b *testing.B) {
			for b.Loop() {
				_, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "git", Args: []string{"-C", dir, "merge-tree", "--write-tree", "--name-only", works[0].Tip, works[1].Tip}})
				if ee, ok := runner.AsExit(err); err != nil && !(ok && ee.Result.ExitCode == 1) {
					b.Fatal(err)
				}
			}
		})
	}
}
