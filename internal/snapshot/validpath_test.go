package snapshot

import "testing"

// A path git's verify_path refuses for naming .git on some file system
// (core.protectNTFS, core.protectHFS) is never committed: fast-import, which
// makes the commits, does not check as update-index did.
func TestValidPathRefusesDotGitVariants(t *testing.T) {
	for _, p := range []string{
		".git", ".GIT/config", "a/.Git", ".git.", ".git ", ".git. . ", "GIT~1", "sub/git~1/x",
		".git::$INDEX_ALLOCATION", ".git:stream", "\u200c.git", ".g\u200dit", ".git\ufeff", "..", "a/./b", "/abs", "", "a\x00b",
	} {
		if ValidPath(p) {
			t.Errorf("ValidPath(%q) = true", p)
		}
	}
	for _, p := range []string{".gitignore", ".github/x", "a.git", "git", ".gitx", "x/.git2", "git~2", ".gitmodules", "naïve", "a:b"} {
		if !ValidPath(p) {
			t.Errorf("ValidPath(%q) = false", p)
		}
	}
}
