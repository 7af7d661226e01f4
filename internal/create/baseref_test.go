package create

import (
	"strings"
	"testing"
)

func TestSplitBaseRefRefusesRevisionSyntax(t *testing.T) {
	for _, ref := range []string{
		"stash@{0}^3", "stash@{0}", "HEAD@{1}", "@{-1}", "main@{yesterday}", "@",
		":/fix", "main:src", "HEAD^{/fix}", "v1^{tree}", "main..other", "-x",
		"ma in", "a\x1b[31m", "main~2x", "main^!", "main^@", "",
	} {
		if _, _, err := splitBaseRef(ref); err == nil {
			t.Errorf("%q accepted", ref)
		} else if !strings.Contains(err.Error(), "branch, a tag") {
			t.Errorf("%q: %v does not say what may be used", ref, err)
		}
	}
	for ref, want := range map[string][2]string{
		"main":              {"main", ""},
		"v1.2.0":            {"v1.2.0", ""},
		"HEAD~3":            {"HEAD", "~3"},
		"feature/x^2~1":     {"feature/x", "^2~1"},
		"origin/main^":      {"origin/main", "^"},
		"refs/tags/v1~":     {"refs/tags/v1", "~"},
		"0123abcd":          {"0123abcd", ""},
		"litterbox/other~1": {"litterbox/other", "~1"},
	} {
		name, suffix, err := splitBaseRef(ref)
		if err != nil || name != want[0] || suffix != want[1] {
			t.Errorf("%q: %q %q %v, want %q %q", ref, name, suffix, err, want[0], want[1])
		}
	}
}

func TestPickBaseRef(t *testing.T) {
	refs := map[string]bool{
		"refs/heads/main": true, "refs/heads/both": true, "refs/tags/both": true, "refs/tags/v1": true,
		"refs/remotes/origin/main": true, "refs/heads/litterbox/mine": true, "refs/heads/litterbox/other": true,
	}
	mine := func(slug string) bool { return slug == "mine" }
	for name, want := range map[string]string{
		"main": "refs/heads/main", "both": "refs/tags/both", "v1": "refs/tags/v1", "origin/main": "refs/remotes/origin/main",
		"refs/heads/main": "refs/heads/main", "HEAD": "HEAD", "litterbox/mine": "refs/heads/litterbox/mine",
		"0123abcd": "", "nosuch": "", "stash": "",
	} {
		if got, err := pickBaseRef(name, refs, mine); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"litterbox/other", "refs/heads/litterbox/other", "refs/litterbox/mine/state", "refs/stash", "refs/notes/commits"} {
		if got, err := pickBaseRef(name, refs, mine); err == nil {
			t.Errorf("%q accepted as %q", name, got)
		}
	}
	// The CLI (no scope) may name any sandbox's branch.
	if got, err := pickBaseRef("litterbox/other", refs, nil); err != nil || got != "refs/heads/litterbox/other" {
		t.Errorf("CLI litterbox/other: %q %v", got, err)
	}
}
