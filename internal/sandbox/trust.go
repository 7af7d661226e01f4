package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

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
	digest, files, err := m.Repo.CommittedDigest()
	if err != nil {
		return nil, err
	}
	if digest == "" {
		return nil, fmt.Errorf("%s has no %s or devcontainer.json to trust", m.Repo.Root, config.File)
	}
	cfg, err := config.Load(m.Repo.Root)
	if err != nil {
		return nil, err
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(m.Repo.Root, filepath.FromSlash(f))
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
	unlock, err := layout.LockFile(m.Repo.TrustPath() + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	recs, err := m.Repo.LoadTrust()
	if err != nil {
		return nil, err
	}
	recs[m.Repo.Root] = digest
	delete(recs, hostrepo.BuildTrustKey(m.Repo.Root))
	if build != nil {
		recs[hostrepo.BuildTrustKey(m.Repo.Root)] = build.TrustDigest()
		res.Build = build.Spec.Dockerfile + " at commit " + hostrepo.ShortID(build.Commit)
	}
	return res, layout.WriteFileAtomic(m.Repo.TrustPath(), layout.JSON(recs))
}

// headBuild is the build inputs of HEAD that the committed config asks
// trust for: none when it builds nothing, or the build is the user's own
// (.litterbox.local.toml).
func (m *Manager) headBuild(cfg config.Config) (*image.Inputs, error) {
	if cfg.Build == nil || !config.IsCommitted(cfg.From["docker.build"]) {
		return nil, nil
	}
	ctx := context.Background()
	head, err := m.Repo.Git.ResolveCommit(ctx, "HEAD")
	if err != nil {
		return nil, fmt.Errorf("[docker] build: the image is built from a commit and this repository has none yet: commit the Dockerfile, then run litterbox trust")
	}
	return m.Images().ReadInputs(ctx, cfg.Build, head)
}
