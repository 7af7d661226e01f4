package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
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

// checkBuildTrust refuses in's build unless its Dockerfile and
// .dockerignore are the ones the user trusted.
func (m *Manager) checkBuildTrust(in *buildInputs) error {
	recs, err := m.LoadTrust()
	if err != nil {
		return err
	}
	switch rec := recs[hostrepo.BuildTrustKey(m.Root)]; rec {
	case in.trustDigest():
		return nil
	case "":
		return &BuildTrustError{Dockerfile: in.spec.Dockerfile, Commit: in.commit}
	}
	return &BuildTrustError{Dockerfile: in.spec.Dockerfile, Commit: in.commit, Changed: true}
}

// TrustResult is what `litterbox trust` allowed.
type TrustResult struct {
	File   string `json:"file"`
	Digest string `json:"digest"`
	// Build, when the committed config builds the image, names the
	// Dockerfile and commit allowed with it.
	Build string `json:"build,omitempty"`
	// Weakenings are what the committed config loosens, now allowed.
	Weakenings []string `json:"weakenings"`
}

// Trust allows the work tree's committed config as it is now, weakenings
// included, and, when it builds the image, HEAD's Dockerfile and
// .dockerignore.
func (m *Manager) Trust() (*TrustResult, error) {
	digest, files, err := m.CommittedDigest()
	if err != nil {
		return nil, err
	}
	if digest == "" {
		return nil, fmt.Errorf("%s has no %s or devcontainer.json to trust", m.Root, config.File)
	}
	cfg, err := config.Load(m.Root)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(m.Root, filepath.FromSlash(f))
	}
	res := &TrustResult{File: strings.Join(paths, " + "), Digest: digest, Weakenings: []string{}}
	for _, w := range cfg.Weakenings() {
		if config.IsCommitted(w.File) {
			res.Weakenings = append(res.Weakenings, w.String())
		}
	}
	// A build HEAD cannot make yet (no Dockerfile committed) is not
	// trusted; create says why when it comes to it.
	build, _ := m.headBuild(cfg)
	unlock, err := layout.LockFile(m.TrustPath() + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	recs, err := m.LoadTrust()
	if err != nil {
		return nil, err
	}
	recs[m.Root] = digest
	delete(recs, hostrepo.BuildTrustKey(m.Root))
	if build != nil {
		recs[hostrepo.BuildTrustKey(m.Root)] = build.trustDigest()
		res.Build = build.spec.Dockerfile + " at commit " + hostrepo.ShortID(build.commit)
	}
	return res, layout.WriteFileAtomic(m.TrustPath(), layout.JSON(recs))
}

// headBuild is the build inputs of HEAD that the committed config asks
// trust for: none when it builds nothing, or the build is the user's own
// (.litterbox.local.toml).
func (m *Manager) headBuild(cfg config.Config) (*buildInputs, error) {
	if cfg.Build == nil || !config.IsCommitted(cfg.From["docker.build"]) {
		return nil, nil
	}
	ctx := context.Background()
	head, err := m.Git.ResolveCommit(ctx, "HEAD")
	if err != nil {
		return nil, fmt.Errorf("[docker] build: the image is built from a commit and this repository has none yet: commit the Dockerfile, then run litterbox trust")
	}
	return m.buildInputs(ctx, cfg.Build, head)
}
