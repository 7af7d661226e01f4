// Package image is a repository's project image: built from a Dockerfile as
// one commit holds it (never the host's work tree), tagged by a digest of
// its inputs, allowed by the user's trust when the committed config asks for
// it; and the image's user, read from its files without running it.
package image

import (
	"io"
	"time"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// Builder builds and reads the images of one repository's sandboxes.
type Builder struct {
	Repo *hostrepo.Repo
	// Output, when set, receives a build's log as it is made (a
	// terminal); otherwise only a failed build's tail is shown.
	Output io.Writer
	// Progress, when set, is told about a build when it is done (a
	// create's progress).
	Progress func(step string, took time.Duration)
}
