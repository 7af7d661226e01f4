package sandbox

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
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
	n := NamesFor("my-repo", "my-feature")
	want := Names{Slug: "my-feature", Branch: "litterbox/my-feature", Ref: "refs/heads/litterbox/my-feature",
		Container: "litterbox-my-repo-my-feature", Volume: "litterbox-my-repo-my-feature-src"}
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

func TestChownRewritesOwnersAndStreamsContent(t *testing.T) {
	var in bytes.Buffer
	tw := tar.NewWriter(&in)
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": "abc"}})
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "d/", Mode: 0o755, Uid: 0, Gid: 0, Uname: "root"})
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "d/run.sh", Mode: 0o755, Size: 5, Uid: 42, Gid: 42})
	_, _ = tw.Write([]byte("hello"))
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "link", Linkname: "d/run.sh"})
	_ = tw.Close()
	in.Write(make([]byte, 10240)) // record padding after the end marker, as git writes it

	var out bytes.Buffer
	if err := Chown(&out, &in, 1000, 1001, nil); err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(&out)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if h.Uid != 1000 || h.Gid != 1001 || h.Uname != "" {
			t.Errorf("%s owned by %d:%d (%s)", h.Name, h.Uid, h.Gid, h.Uname)
		}
		if h.Name == "d/run.sh" {
			body, _ := io.ReadAll(tr)
			if string(body) != "hello" || h.Mode != 0o755 {
				t.Errorf("run.sh: %q mode %o", body, h.Mode)
			}
		}
		if h.Name == "link" && h.Linkname != "d/run.sh" {
			t.Errorf("symlink target %q", h.Linkname)
		}
	}
	if strings.Join(names, ",") != "d/,d/run.sh,link" {
		t.Errorf("entries %v (global header must be dropped)", names)
	}
}

func TestChownRejectsGarbage(t *testing.T) {
	if err := Chown(io.Discard, strings.NewReader(strings.Repeat("x", 1024)), 1, 1, nil); err == nil {
		t.Error("garbage input accepted")
	}
}

func TestStatusOf(t *testing.T) {
	failed := &Record{Status: recFailedSetup}
	for _, tc := range []struct {
		state string
		rec   *Record
		want  string
	}{
		{"running", nil, StatusActive},
		{"running", failed, StatusFailedSetup},
		{"paused", failed, StatusPaused},
		{"exited", nil, StatusStopped},
		{"created", nil, StatusStopped},
		{"dead", nil, StatusError},
		{"removing", nil, StatusError},
	} {
		if got := statusOf(dockerState(tc.state), tc.rec); got != tc.want {
			t.Errorf("statusOf(%s) = %s, want %s", tc.state, got, tc.want)
		}
	}
}
