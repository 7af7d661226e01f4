package snapshot

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/secrets"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// moved is a directory of n files, old/<i>.txt, with content body(i), and
// the helper's report of its move to new/: n removals and n new files.
func moved(n int, body func(i int) string) (testenv.Files, []protocol.Change, map[string]string) {
	files := testenv.Files{"README.md": "hi\n"}
	var changes []protocol.Change
	sent := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("old/%d.txt", i)] = body(i)
		changes = append(changes, protocol.Change{Op: protocol.Removed, Path: fmt.Sprintf("old/%d.txt", i)})
		changes = append(changes, changed(fmt.Sprintf("new/%d.txt", i), body(i)))
		sent[fmt.Sprintf("new/%d.txt", i)] = body(i)
	}
	return files, changes, sent
}

func plain(i int) string { return fmt.Sprintf("file %d\n", i) }

// A moved directory's files are taken from the index: none is sent, and
// the branch holds the same blobs under the new names.
func TestTakeReusesMovedFiles(t *testing.T) {
	files, changes, sent := moved(20, plain)
	s, st := store(t, files)
	f := &fakeHelper{changes: changes, files: sent}
	if taken := take(t, s, st, f); taken.Commit == "" {
		t.Fatal("no commit")
	}
	if len(f.asked) != 0 {
		t.Errorf("host asked for %d moved files: %v", len(f.asked), f.asked)
	}
	want := testenv.Git(t, s.Git.Dir, "rev-parse", "HEAD:old")
	if got := testenv.Git(t, s.Git.Dir, "rev-parse", "litterbox/work:new"); got != want {
		t.Errorf("new/ is tree %s, old/ was %s", got, want)
	}
	if got := tree(t, s); strings.Contains(got, "old/") {
		t.Errorf("old/ still on the branch:\n%s", got)
	}
}

// A few files are fetched as before: reuse would cost more than it saves.
func TestTakeFetchesAFewMovedFiles(t *testing.T) {
	files, changes, sent := moved(minReuse-1, plain)
	s, st := store(t, files)
	f := &fakeHelper{changes: changes, files: sent}
	take(t, s, st, f)
	if len(f.asked) != minReuse-1 {
		t.Errorf("asked %v", f.asked)
	}
}

// The helper's ids are not trusted to name objects: an id of a blob the
// repository has but the sandbox's tree does not (another branch's), or
// a commit's, makes the host fetch the file and store what it receives.
func TestTakeReusesOnlyTheSandboxsOwnBlobs(t *testing.T) {
	s, st := store(t, testenv.Files{"README.md": "hi\n"})
	testenv.Git(t, s.Git.Dir, "checkout", "-q", "-b", "private")
	if err := os.WriteFile(filepath.Join(s.Git.Dir, "private.txt"), []byte("not the sandbox's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testenv.Git(t, s.Git.Dir, "add", "private.txt")
	testenv.Git(t, s.Git.Dir, "commit", "-q", "-m", "private")
	testenv.Git(t, s.Git.Dir, "checkout", "-q", "main")
	commit := testenv.Git(t, s.Git.Dir, "rev-parse", "private")
	f := &fakeHelper{files: map[string]string{}}
	for i := range 2 * minReuse {
		c := changed(fmt.Sprintf("claim/%d", i), "not the sandbox's\n")
		if i%2 == 1 {
			copy(c.ID[:], decodeHex(t, commit))
		}
		f.changes = append(f.changes, c)
		f.files[c.Path] = "what is really there\n"
	}
	take(t, s, st, f)
	if len(f.asked) != 2*minReuse {
		t.Errorf("host asked for %d of %d files", len(f.asked), 2*minReuse)
	}
	if got := testenv.Git(t, s.Git.Dir, "show", "litterbox/work:claim/0"); got != "what is really there" {
		t.Errorf("claim/0 holds %q", got)
	}
}

// A blob is not reused where `git add` would store other bytes: under a
// filter or ident attribute, or with a CR where end-of-line conversion
// applies; nor one holding a secret's value (the copy is withheld as a
// fetched file is), nor one over max-file-size whatever size the helper
// says.
func TestTakeReusesOnlyWhatGitWouldStore(t *testing.T) {
	cases := []struct {
		name  string
		attrs string
		body  func(int) string
		setup func(t *testing.T, s *Store)
		fetch bool
	}{
		{name: "plain", body: plain},
		{name: "a CR, no conversion", body: func(i int) string { return plain(i) + "\r\n" }},
		{name: "a CR under text=auto", attrs: "* text=auto\n", body: func(i int) string { return plain(i) + "\r\n" }, fetch: true},
		{name: "no CR under text=auto", attrs: "* text=auto\n", body: plain},
		{name: "a CR with core.autocrlf", body: func(i int) string { return plain(i) + "\r\n" }, fetch: true,
			setup: func(t *testing.T, s *Store) { testenv.Git(t, s.Git.Dir, "config", "core.autocrlf", "input") }},
		{name: "a filter", attrs: "new/** filter=lfs\n", body: plain, fetch: true},
		{name: "ident", attrs: "*.txt ident\n", body: plain, fetch: true},
		{name: "a CR under the old crlf attribute", attrs: "* crlf\n", body: func(i int) string { return plain(i) + "\r\n" }, fetch: true},
		{name: "a secret's value", body: func(i int) string { return "token hunter2-long-value\n" + plain(i) }, fetch: true,
			setup: func(t *testing.T, s *Store) { s.Secrets = hunter2(t) }},
		{name: "the value of a secret the sandbox is no longer given (still masked)", body: func(i int) string { return "token hunter2-long-value\n" + plain(i) }, fetch: true,
			setup: func(t *testing.T, s *Store) {
				s.Secrets = hunter2(t).InSandbox(map[string]config.SecretSpec{"TOKEN": {Env: "TOKEN", Inject: []string{"api.example.com"}}}, nil)
			}},
		{name: "over max-file-size", body: func(i int) string { return strings.Repeat("x", 100) + plain(i) }, fetch: true,
			setup: func(t *testing.T, s *Store) { s.MaxFile = 64 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files, changes, sent := moved(minReuse, c.body)
			s, st := store(t, files)
			if c.attrs != "" {
				if err := writeUnder(s.Rules, ".gitattributes", []byte(c.attrs)); err != nil {
					t.Fatal(err)
				}
			}
			if c.setup != nil {
				c.setup(t, s)
			}
			for i := range changes {
				changes[i].Size = 1 // a lie, for max-file-size
			}
			f := &fakeHelper{changes: changes, files: sent}
			take(t, s, st, f)
			want := 0
			if c.fetch {
				want = minReuse
			}
			if len(f.asked) != want {
				t.Errorf("host asked for %d files, want %d", len(f.asked), want)
			}
		})
	}
}

func hunter2(t *testing.T) *secrets.Values {
	r := &secrets.Resolver{LookupEnv: func(string) (string, bool) { return "hunter2-long-value", true }}
	sec, err := r.Resolve(context.Background(), map[string]config.SecretSpec{"TOKEN": {Env: "TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	return sec
}

func decodeHex(t *testing.T, s string) []byte {
	var b []byte
	if _, err := fmt.Sscanf(s, "%x", &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// A symlink is reused only within the length Linux allows its target, as
// a fetched one is bounded: a helper reporting a link with the id of a
// long file's blob gets it fetched.
func TestTakeReusesNoLongLink(t *testing.T) {
	long := func(i int) string { return strings.Repeat("x", maxLink) + plain(i) }
	files, changes, sent := moved(minReuse, long)
	for i := range changes {
		if changes[i].Op == protocol.Changed {
			changes[i].Mode = protocol.ModeSymlink | 0o777
		}
	}
	s, st := store(t, files)
	f := &fakeHelper{changes: changes, files: sent}
	take(t, s, st, f)
	if len(f.asked) != minReuse {
		t.Errorf("host asked for %d links, want all %d", len(f.asked), minReuse)
	}
}
