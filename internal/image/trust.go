package image

import (
	"fmt"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// BuildTrustError refuses a build from the committed config whose
// Dockerfile (or .dockerignore) was never allowed as the commit holds it.
type BuildTrustError struct {
	Dockerfile string
	Commit     string
	Changed    bool // trusted once, changed since
}

func (e *BuildTrustError) Error() string {
	why := "is not trusted yet"
	if e.Changed {
		why = "has changed since it was trusted"
	}
	return fmt.Sprintf("the image build's %s in commit %s %s: review it (git log -p -- %s), then allow it with litterbox trust", e.Dockerfile, hostrepo.ShortID(e.Commit), why, e.Dockerfile)
}

// CheckBuildTrust refuses in's build unless its Dockerfile and
// .dockerignore are the ones the user trusted.
func (im *Builder) CheckBuildTrust(in *Inputs) error {
	recs, err := im.Repo.LoadTrust()
	if err != nil {
		return err
	}
	switch rec := recs[hostrepo.BuildTrustKey(im.Repo.Root)]; rec {
	case in.TrustDigest():
		return nil
	case "":
		return &BuildTrustError{Dockerfile: in.Spec.Dockerfile, Commit: in.Commit}
	}
	return &BuildTrustError{Dockerfile: in.Spec.Dockerfile, Commit: in.Commit, Changed: true}
}
