package snapshot

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/secrets"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// A file over max-file-size is neither fetched nor committed; the rest of
// the call is. Once the bound allows it, the next call fetches it even
// though the helper does not report it again.
func TestTakeWithholdsAFileOverTheBound(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	s.MaxFile, s.MaxCall = 10, 1<<20
	big := strings.Repeat("x", 20)
	f := &fakeHelper{
		changes: []protocol.Change{changed("small.txt", "small"), changed("big.bin", big)},
		files:   map[string]string{"small.txt": "small", "big.bin": big},
	}
	taken := take(t, s, st, f)
	if slices.Contains(f.asked, "big.bin") {
		t.Errorf("asked for %v; a file over the bound must not be sent", f.asked)
	}
	if got := tree(t, s); got != "README.md\nsmall.txt" {
		t.Errorf("branch holds %q", got)
	}
	want := []Withheld{{Path: "big.bin", Size: 20, Limit: LimitFile, Max: 10}}
	if !slices.Equal(taken.Withheld, want) {
		t.Errorf("withheld %+v, want %+v", taken.Withheld, want)
	}
	if st.Withheld["big.bin"] != 20 {
		t.Errorf("state withholds %v", st.Withheld)
	}

	// Unchanged and still over: nothing asked, nothing said.
	f = &fakeHelper{files: map[string]string{"big.bin": big}}
	if taken = take(t, s, st, f); len(f.asked) != 0 || len(taken.Withheld) != 0 {
		t.Errorf("asked %v, withheld %v for an unchanged file still over the bound", f.asked, taken.Withheld)
	}

	s.MaxFile = 50
	f = &fakeHelper{files: map[string]string{"big.bin": big}}
	taken = take(t, s, st, f)
	if !slices.Equal(f.asked, []string{"big.bin"}) || taken.Commit == "" {
		t.Errorf("after raising the bound: asked %v, commit %q", f.asked, taken.Commit)
	}
	if got := tree(t, s); got != "README.md\nbig.bin\nsmall.txt" || st.Withheld != nil {
		t.Errorf("branch holds %q, state withholds %v", got, st.Withheld)
	}
}

// Past max-call-size the remaining files wait for the next call, which
// commits them.
func TestTakeSpreadsACallOverItsBudget(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	// Every file costs at least MinCost, and the root's new tree object
	// as much: a fits with room for c only.
	s.MaxFile, s.MaxCall = 10000, 6000+2*MinCost
	six, three := strings.Repeat("6", 6000), "333"
	f := &fakeHelper{
		changes: []protocol.Change{changed("a", six), changed("b", six), changed("c", three)},
		files:   map[string]string{"a": six, "b": six, "c": three},
	}
	taken := take(t, s, st, f)
	if !slices.Equal(f.asked, []string{"a", "c"}) {
		t.Errorf("asked %v, want a and c (b is past the budget)", f.asked)
	}
	if len(taken.Withheld) != 1 || taken.Withheld[0].Path != "b" || taken.Withheld[0].Limit != LimitCall {
		t.Errorf("withheld %+v", taken.Withheld)
	}
	if !st.Rescan || st.Withheld != nil {
		t.Errorf("rescan %v, withheld %v: a file past the budget is found again by a full scan", st.Rescan, st.Withheld)
	}
	// The full scan reports everything; only b differs from the branch.
	f = &fakeHelper{
		dirs:    protocol.Dirs{Full: true},
		changes: []protocol.Change{changed("README.md", "hi\n"), changed("a", six), changed("b", six), changed("c", three)},
		files:   map[string]string{"b": six},
	}
	take(t, s, st, f)
	if got := tree(t, s); !slices.Equal(f.asked, []string{"b"}) || got != "README.md\na\nb\nc" || st.Rescan {
		t.Errorf("next call: asked %v, branch holds %q, rescan %v", f.asked, got, st.Rescan)
	}
}

// What arrives is bounded, not what the helper announced: a file bigger
// than reported is read past and withheld, and the files after it are
// still committed.
func TestTakeBoundsWhatArrives(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	s.MaxFile, s.MaxCall = 10, 1<<20
	f := &fakeHelper{
		changes: []protocol.Change{changed("a", "abc"), changed("b", "ok")},
		files:   map[string]string{"a": strings.Repeat("a", 50), "b": "ok"},
	}
	taken := take(t, s, st, f)
	if got := tree(t, s); got != "README.md\nb" {
		t.Errorf("branch holds %q", got)
	}
	if len(taken.Withheld) != 1 || taken.Withheld[0] != (Withheld{Path: "a", Size: 50, Limit: LimitFile, Max: 10}) {
		t.Errorf("withheld %+v", taken.Withheld)
	}
}

// A tracked file that grows over the bound keeps its committed version,
// and the result says so; the helper's count of /src is kept.
func TestTakeKeepsATrackedFileThatGrew(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n", "data": "small\n"})
	s.MaxFile, s.MaxCall = 10, 1<<20
	big := strings.Repeat("d", 30)
	f := &fakeHelper{
		changes: []protocol.Change{changed("data", big)},
		files:   map[string]string{"data": big},
		end:     protocol.End{Files: 1234, Counted: true, Pruned: 99, PrunedKnown: true},
	}
	taken := take(t, s, st, f)
	if len(taken.Withheld) != 1 || !taken.Withheld[0].Tracked {
		t.Errorf("withheld %+v, want data marked tracked", taken.Withheld)
	}
	if got := testenv.Git(t, s.Git.Dir, "show", "litterbox/work:data"); got != "small" {
		t.Errorf("branch's data is %q", got)
	}
	if st.Used() != 1333 {
		t.Errorf("used %d, want 1333", st.Used())
	}
	// A scan that did not count keeps the last count.
	take(t, s, st, &fakeHelper{})
	if st.Used() != 1333 {
		t.Errorf("used %d after an uncounted scan, want 1333", st.Used())
	}
}

// A symlink's target is bounded and charged like a file's content.
func TestTakeBoundsSymlinks(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	s.MaxFile, s.MaxCall = 1<<20, 1<<20
	hostOutR, hostOutW := io.Pipe()
	hostInR, hostInW := io.Pipe()
	go func() {
		r, w := protocol.NewReader(hostOutR), protocol.NewWriter(hostInW)
		w.Frame(protocol.TDirs, (&protocol.Dirs{}).Encode())
		r.Expect(protocol.TPrune)
		w.Frame(protocol.TChanges, (&protocol.Changes{List: []protocol.Change{{Op: protocol.Changed, Mode: protocol.ModeSymlink | 0o777, Size: 1, Path: "l"}}}).Encode())
		r.Expect(protocol.TSelect)
		w.Frame(protocol.TFile, (&protocol.FileHeader{Path: "l", Mode: protocol.ModeSymlink | 0o777, Link: strings.Repeat("x", 5000)}).Encode())
		hostInW.Close()
	}()
	_, err := s.Take(context.Background(), Conversation{R: protocol.NewReader(hostInR), W: protocol.NewWriter(hostOutW)}, st, "bash: test\n")
	hostOutW.Close()
	if err == nil || !strings.Contains(err.Error(), "symlink target of 5000 bytes") {
		t.Errorf("a 5000-byte link target: %v", err)
	}
}

// deepPath is a file depth directories down a chain of its own.
func deepPath(chain, depth int) string {
	var b strings.Builder
	for i := 0; i < depth; i++ {
		fmt.Fprintf(&b, "c%dd%d/", chain, i)
	}
	return b.String() + "f"
}

// Directories cost: every commit writes a tree object for each directory
// above a changed file, so a deep file is charged a block per new one.
// Those past the budget wait, and later calls commit them within it.
func TestTakeChargesTreesToTheBudget(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	const depth = 10
	// Two chains fit: the first file pays for its 10 directories and the
	// root, the second for its 10.
	s.MaxFile, s.MaxCall = 1<<20, (1+depth+1)*MinCost+(1+depth)*MinCost
	var changes []protocol.Change
	files := map[string]string{}
	for i := 0; i < 5; i++ {
		p := deepPath(i, depth)
		changes = append(changes, changed(p, "x\n"))
		files[p] = "x\n"
	}
	taken := take(t, s, st, &fakeHelper{changes: changes, files: files})
	if n := len(strings.Fields(tree(t, s))); n != 3 {
		t.Errorf("branch holds %d files, want README.md and 2 chains", n)
	}
	if len(taken.Withheld) != 3 || taken.Withheld[0].Limit != LimitCall || !st.Rescan {
		t.Errorf("withheld %+v, rescan %v; want 3 past max-call-size", taken.Withheld, st.Rescan)
	}
	// The rules mirror keeps no directory made for the files fetched.
	if ents, _ := os.ReadDir(s.Rules); len(ents) != 0 {
		t.Errorf("the rules mirror holds %d entries after the call, want none", len(ents))
	}
	for range 2 {
		take(t, s, st, &fakeHelper{dirs: protocol.Dirs{Full: true}, changes: append([]protocol.Change{changed("README.md", "hi\n")}, changes...), files: files})
	}
	if n := len(strings.Fields(tree(t, s))); n != 6 || st.Rescan {
		t.Errorf("after two more calls the branch holds %d files (want 6), rescan %v", n, st.Rescan)
	}
}

// Rule files land in the host's mirror within the budget too; what does
// not fit waits with every file under it, and the next scan sends it
// again.
func TestTakeBoundsTheRulesMirror(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	const depth = 10
	s.MaxFile, s.MaxCall = 1<<20, (1+depth)*MinCost
	var rules []protocol.RuleFile
	for i := 0; i < 5; i++ {
		rules = append(rules, protocol.RuleFile{Path: strings.TrimSuffix(deepPath(i, depth), "f") + ".gitignore", Data: []byte("*.log\n")})
	}
	f := &fakeHelper{dirs: protocol.Dirs{Rules: rules}, changes: []protocol.Change{changed(deepPath(4, depth), "x\n")}, files: map[string]string{deepPath(4, depth): "x\n"}}
	taken := take(t, s, st, f)
	dirs := 0
	filepath.WalkDir(s.Rules, func(_ string, d fs.DirEntry, _ error) error {
		if d != nil && d.IsDir() {
			dirs++
		}
		return nil
	})
	if dirs != 1+depth {
		t.Errorf("the mirror holds %d directories, want the root and one chain of %d", dirs, depth)
	}
	if len(f.asked) != 0 || len(taken.Withheld) != 1 || taken.Withheld[0].Limit != LimitCall || !st.Rescan {
		t.Errorf("asked %v, withheld %+v, rescan %v: a file under a rule that waits waits too", f.asked, taken.Withheld, st.Rescan)
	}
}

// A path holding a secret's value is left out and shown masked; the rest
// of the call commits.
func TestTakeRefusesASecretInAPath(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	r := &secrets.Resolver{LookupEnv: func(string) (string, bool) { return "hunter2-long-value", true }}
	sec, err := r.Resolve(context.Background(), map[string]config.SecretSpec{"TOKEN": {Env: "TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	s.Secrets = sec
	f := &fakeHelper{
		changes: []protocol.Change{changed("d-hunter2-long-value/x", "x"), changed("hunter2-long-value.txt", "y"), changed("ok.txt", "z")},
		files:   map[string]string{"ok.txt": "z"},
	}
	taken := take(t, s, st, f)
	if got := tree(t, s); got != "README.md\nok.txt" {
		t.Errorf("branch holds %q", got)
	}
	if len(taken.Withheld) != 2 || taken.Withheld[0].Path != "d-***/x" || taken.Withheld[1].Path != "***.txt" || !taken.Withheld[0].InName || taken.Withheld[0].Secret != "TOKEN" {
		t.Errorf("withheld %+v", taken.Withheld)
	}
	if st.Withheld != nil {
		t.Errorf("state withholds %v; a secret's value must not reach the state file", st.Withheld)
	}
}
