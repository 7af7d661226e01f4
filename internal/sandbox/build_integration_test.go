//go:build integration

package sandbox

import "testing"

// A project image is built from the commit alone: an untracked, ignored
// .env with a secret, the credential in .git/config and an uncommitted
// Dockerfile in the work tree never reach it, and neither does .git.
func TestIntegrationBuildReadsOnlyTheCommit(t *testing.T) {
	buildReadsOnlyTheCommit(t, "busybox:latest")
}
