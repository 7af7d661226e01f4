package snapshot

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// A path the host cannot store (past PATH_MAX under the mirror, or with a
// name past NAME_MAX) is neither fetched nor committed, and is named; the
// rest of the call is committed, and later calls commit as usual.
func TestTakeWithholdsAPathTooLongForTheHost(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	dirs := strings.Repeat(strings.Repeat("a", 255)+"/", 15)
	long := dirs + strings.Repeat("b", 4088-len(dirs)) // 4,088 bytes, every name within NAME_MAX
	wide := "d/" + strings.Repeat("n", 256)            // one name past NAME_MAX
	if len(long) != 4088 {
		t.Fatalf("long path of %d bytes", len(long))
	}
	f := &fakeHelper{
		changes: []protocol.Change{changed("ok.txt", "ok"), changed(long, "x"), changed(wide, "y")},
		files:   map[string]string{"ok.txt": "ok", long: "x", wide: "y"},
	}
	taken := take(t, s, st, f)
	if !slices.Equal(f.asked, []string{"ok.txt"}) {
		t.Errorf("asked for %d paths, want ok.txt only", len(f.asked))
	}
	if got := tree(t, s); got != "README.md\nok.txt" {
		t.Errorf("branch holds %q", got)
	}
	var limits []string
	for _, w := range taken.Withheld {
		limits = append(limits, fmt.Sprintf("%d %s %d", len(w.Path), w.Limit, w.Max))
	}
	want := []string{fmt.Sprintf("4088 %s %d", LimitPath, s.maxPath()), fmt.Sprintf("258 %s %d", LimitPath, s.maxPath())}
	slices.Sort(limits)
	slices.Sort(want)
	if !slices.Equal(limits, want) {
		t.Errorf("withheld %v, want %v", limits, want)
	}
	// Unchanged: not asked for again and not named again; other changes
	// are committed.
	f = &fakeHelper{changes: []protocol.Change{changed("later.txt", "later")}, files: map[string]string{"later.txt": "later", long: "x", wide: "y"}}
	if taken = take(t, s, st, f); !slices.Equal(f.asked, []string{"later.txt"}) || len(taken.Withheld) != 0 || taken.Commit == "" {
		t.Errorf("later call: asked %d paths, withheld %d, commit %q", len(f.asked), len(taken.Withheld), taken.Commit)
	}
	if got := tree(t, s); got != "README.md\nlater.txt\nok.txt" {
		t.Errorf("branch holds %q", got)
	}
}

// The names a call asks for fit the one Select frame that carries them:
// 100,000 names of 240 bytes (24 MB) are spread over calls instead of
// failing every call on a frame past protocol.MaxFrame.
func TestBoundKeepsTheSelectFrameUnderItsLimit(t *testing.T) {
	p := &planResult{size: map[string]int64{}, budget: 1 << 62}
	for i := range 100_000 {
		q := fmt.Sprintf("n/%s%06d", strings.Repeat("x", 232), i)
		p.fetch = append(p.fetch, q)
		p.size[q] = 0
	}
	p.bound(0, 0)
	frame := (&protocol.Select{Paths: p.fetch}).Encode()
	if len(frame) > protocol.MaxFrame {
		t.Fatalf("Select of %d bytes, over %d", len(frame), protocol.MaxFrame)
	}
	if len(p.fetch)+len(p.withheld) != 100_000 || len(p.withheld) == 0 || p.withheld[0].Limit != LimitCall {
		t.Fatalf("kept %d, withheld %d (first %+v)", len(p.fetch), len(p.withheld), p.withheld[0])
	}
	t.Logf("kept %d names in a Select of %d bytes; %d wait for the next call", len(p.fetch), len(frame), len(p.withheld))
}

// A .gitignore at a path the host cannot store is skipped, not a failure
// of every call: what it rules is past the host's bound as well.
func TestTakeSkipsARuleFileTooLongForTheHost(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	deep := strings.Repeat(strings.Repeat("r", 255)+"/", 16) + ".gitignore"
	f := &fakeHelper{
		dirs:    protocol.Dirs{Rules: []protocol.RuleFile{{Path: deep, Data: []byte("*\n")}}},
		changes: []protocol.Change{changed("ok.txt", "ok")},
		files:   map[string]string{"ok.txt": "ok"},
	}
	if taken := take(t, s, st, f); taken.Commit == "" {
		t.Fatalf("nothing committed: %+v", taken)
	}
	if got := tree(t, s); got != "README.md\nok.txt" {
		t.Errorf("branch holds %q", got)
	}
}
