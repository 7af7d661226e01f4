package gitcli

import (
	"slices"
	"testing"
)

func TestArgvBuilders(t *testing.T) {
	for _, tc := range []struct {
		got, want []string
	}{
		{RepoArgs(), []string{"rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--is-bare-repository", "--show-toplevel"}},
		{ResolveCommitArgs("-x"), []string{"rev-parse", "--verify", "--quiet", "--end-of-options", "-x^{commit}"}},
		{CreateRefArgs("refs/heads/litterbox/a", "abc", "litterbox: create a"), []string{"update-ref", "-m", "litterbox: create a", "refs/heads/litterbox/a", "abc", ""}},
		{DeleteRefArgs("refs/heads/litterbox/a", "abc"), []string{"update-ref", "-d", "refs/heads/litterbox/a", "abc"}},
		{DeleteRefArgs("refs/heads/litterbox/a", ""), []string{"update-ref", "-d", "refs/heads/litterbox/a"}},
		{ListRefsArgs("refs/heads/litterbox/"), []string{"for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/litterbox/"}},
		{ArchiveArgs("abc"), []string{"-c", "tar.umask=0022", "archive", "--format=tar", "abc"}},
		{StatusArgs(), []string{"status", "--porcelain=v1", "-z", "--untracked-files=normal"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("got %q\nwant %q", tc.got, tc.want)
		}
	}
}
