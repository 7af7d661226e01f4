package hostrepo

import (
	"errors"
	"strings"
	"testing"
)

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"My Feature Name!@#": "my-feature-name",
		"feature-x-dev":      "feature-x-dev",
		"  --Hello__World--": "hello-world",
		"a...b":              "a-b",
		"UPPER":              "upper",
		"ünïcode stuff":      "n-code-stuff",
		"123":                "123",
		"!@#$%":              "",
		"":                   "",
		"a/b\\c":             "a-b-c",
		"tab\there":          "tab-here",
	} {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseNameLimits(t *testing.T) {
	ok63 := strings.Repeat("a", 63)
	if s, err := ParseName(ok63); err != nil || s != ok63 {
		t.Errorf("63 chars: %q %v", s, err)
	}
	// Punctuation that slugifies away does not count against the limit.
	if s, err := ParseName("--" + ok63 + "!!"); err != nil || s != ok63 {
		t.Errorf("63 chars with trimmed dashes: %q %v", s, err)
	}
	for _, bad := range []string{"", "!!!", strings.Repeat("a", 64), strings.Repeat("ab ", 22)} {
		_, err := ParseName(bad)
		var inv *InvalidNameError
		if !errors.As(err, &inv) {
			t.Errorf("ParseName(%q) = %v, want InvalidNameError", bad, err)
			continue
		}
		if !strings.Contains(err.Error(), "1-63 characters") || !strings.Contains(err.Error(), "[a-z0-9-]") {
			t.Errorf("error %q does not state the rule", err)
		}
	}
}

func TestNamesFor(t *testing.T) {
	n := NamesFor("my-repo", "0a1b2c3d", "my-feature")
	want := Names{Slug: "my-feature", Branch: "litterbox/my-feature", Ref: "refs/heads/litterbox/my-feature",
		Container: "litterbox-my-repo-0a1b2c3d-my-feature", Volume: "litterbox-my-repo-0a1b2c3d-my-feature-src"}
	if n != want {
		t.Errorf("got %+v\nwant %+v", n, want)
	}
}

func TestRepoSlug(t *testing.T) {
	for in, want := range map[string]string{"My Repo": "my-repo", "___": "repo", strings.Repeat("x", 70): strings.Repeat("x", 63)} {
		if got := RepoSlug(in); got != want {
			t.Errorf("RepoSlug(%q) = %q, want %q", in, got, want)
		}
	}
}

// A container says which sandbox it is by its label, or, claimed from a
// warm pool before its name was known, by the name it took; an entry not
// yet claimed, or another repository's name, is no sandbox.
func TestSlugOf(t *testing.T) {
	labels := map[string]string{LabelRepoSlug: "app", LabelRepoID: "1a2b3c4d"}
	for name, want := range map[string]string{
		"litterbox-app-1a2b3c4d-fix-login":     "fix-login",
		"litterbox-app-1a2b3c4d.pool-0f0f0f0f": "",
		"litterbox-app-99999999-fix-login":     "",
		"litterbox-app-1a2b3c4d-Bad_Name":      "",
		"litterbox-app-1a2b3c4d-":              "",
	} {
		if got := SlugOf(name, labels); got != want {
			t.Errorf("SlugOf(%q) = %q, want %q", name, got, want)
		}
	}
	if got := SlugOf("anything", map[string]string{LabelSandbox: "work"}); got != "work" {
		t.Errorf("the label gave %q", got)
	}
	if got := SlugOf("litterbox-app--x", map[string]string{LabelRepoSlug: "app"}); got != "" {
		t.Errorf("a container without a repository id gave %q", got)
	}
}

// A name that is a path is refused with the slug it would have become,
// not silently turned into another name; a slash inside a name is not a
// path.
func TestParseNameRefusesPaths(t *testing.T) {
	for _, n := range []string{"../../etc", "/etc", "./fix", "~/x", "a/../b", "..", "a/./b"} {
		_, err := ParseName(n)
		var e *InvalidNameError
		if !errors.As(err, &e) || !e.Path {
			t.Errorf("%q: %v, want it refused as a path", n, err)
		}
	}
	if err := (&InvalidNameError{Name: "../../etc", Path: true, Slug: "etc"}).Error(); err != `invalid sandbox name "../../etc": it is a path, not a name (it would become 'etc'); name the sandbox with letters, digits and dashes` {
		t.Errorf("%s", err)
	}
	for n, want := range map[string]string{"feature/login": "feature-login", "v1.2..3": "v1-2-3", "My Feature!": "my-feature"} {
		if got, err := ParseName(n); got != want || err != nil {
			t.Errorf("%q: %q %v, want %q", n, got, err, want)
		}
	}
}
