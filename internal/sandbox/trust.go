package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/devcontainer"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// FlagNetwork is the source of a network named on create's command line,
// the one place "host" is taken from.
const FlagNetwork = "--network"

// The committed config comes with the repository, possibly someone else's,
// or merged from an agent's branch: what it loosens needs the user's word,
// given with `litterbox trust` (as direnv allow and mise trust do). The
// word is the digest of the file, so a changed file needs it again; a
// build's Dockerfile is allowed the same way, under a key of its own.

func (m *Manager) trustPath() string { return m.Layout().Trust() }

// trustRecords maps a work tree's root to the digest of the committed
// config its user allowed.
type trustRecords map[string]string

func (m *Manager) loadTrust() (trustRecords, error) {
	recs := trustRecords{}
	data, err := os.ReadFile(m.trustPath())
	if errors.Is(err, fs.ErrNotExist) {
		return recs, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v); remove it and run litterbox trust again", m.trustPath(), err)
	}
	return recs, nil
}

// committedDigest is the digest of the work tree's committed config, ""
// when there is none: .litterbox.toml's alone (as before devcontainer.json
// counted), or, with a devcontainer.json, of both files by name.
func (m *Manager) committedDigest() (digest string, files []string, err error) {
	toml, err := os.ReadFile(filepath.Join(m.Root, config.File))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	if err == nil {
		files = append(files, config.File)
	}
	dc, err := devcontainer.Find(m.Root)
	if err != nil {
		return "", nil, err
	}
	if dc == "" {
		if files == nil {
			return "", nil, nil
		}
		sum := sha256.Sum256(toml)
		return "sha256:" + hex.EncodeToString(sum[:]), files, nil
	}
	data, err := os.ReadFile(filepath.Join(m.Root, filepath.FromSlash(dc)))
	if err != nil {
		return "", nil, err
	}
	files = append(files, dc)
	h := sha256.New()
	if toml != nil {
		fmt.Fprintf(h, "%s\x00%d\x00", config.File, len(toml))
		h.Write(toml)
	}
	fmt.Fprintf(h, "%s\x00%d\x00", dc, len(data))
	h.Write(data)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), files, nil
}

// TrustState says whether the committed config is allowed.
type TrustState int

// Trust states of the committed config.
const (
	Untrusted TrustState = iota
	Trusted
	// Changed: trusted once, edited since.
	Changed
)

func (m *Manager) trustState() (TrustState, error) {
	digest, _, err := m.committedDigest()
	if err != nil {
		return Untrusted, err
	}
	recs, err := m.loadTrust()
	if err != nil {
		return Untrusted, err
	}
	switch rec := recs[m.Root]; {
	case rec == "":
		return Untrusted, nil
	case rec == digest:
		return Trusted, nil
	}
	return Changed, nil
}

// buildTrustKey is the trust record of a work tree's build, beside the
// record of its config: the Dockerfile the committed config builds from
// runs RUN steps on this machine's engine, so a changed one needs the
// user's word again, as a changed config does.
func buildTrustKey(root string) string { return "build:" + root }

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
	recs, err := m.loadTrust()
	if err != nil {
		return err
	}
	switch rec := recs[buildTrustKey(m.Root)]; rec {
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
	digest, files, err := m.committedDigest()
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
	unlock, err := layout.LockFile(m.trustPath() + ".lock")
	if err != nil {
		return nil, err
	}
	defer unlock()
	recs, err := m.loadTrust()
	if err != nil {
		return nil, err
	}
	recs[m.Root] = digest
	delete(recs, buildTrustKey(m.Root))
	if build != nil {
		recs[buildTrustKey(m.Root)] = build.trustDigest()
		res.Build = build.spec.Dockerfile + " at commit " + hostrepo.ShortID(build.commit)
	}
	return res, layout.WriteFileAtomic(m.trustPath(), layout.JSON(recs))
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

// Untrust withdraws the trust of this work tree's committed config.
func (m *Manager) Untrust() error {
	unlock, err := layout.LockFile(m.trustPath() + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	recs, err := m.loadTrust()
	if err != nil {
		return err
	}
	delete(recs, m.Root)
	delete(recs, buildTrustKey(m.Root))
	return layout.WriteFileAtomic(m.trustPath(), layout.JSON(recs))
}

// WeakeningError refuses a setting that loosens the sandbox from a source
// that may not: the committed config before `litterbox trust`, or network
// "host" from any file.
type WeakeningError struct {
	Weakening config.Weakening
	State     TrustState
}

func (e *WeakeningError) Error() string {
	w := e.Weakening
	if w.Key == "docker.network" && w.Value == strconv.Quote("host") {
		return fmt.Sprintf(`%s sets docker.network = "host", which shares the host's network with the sandbox; Litterbox takes that only from the command line: litterbox create NAME --network host`, w.File)
	}
	why := "this repository's committed config is not trusted"
	if e.State == Changed {
		why = "the committed config has changed since it was trusted"
		if w.File == config.File {
			why = config.File + " has changed since it was trusted"
		}
	}
	return fmt.Sprintf("%s sets %s, which loosens the sandbox, and %s: read it, then allow it with litterbox trust (or set it in %s)", w.File, w, why, config.LocalFile)
}

// checkWeakenings refuses what cfg loosens from a source that may not, and
// describes the rest for create's output.
func (m *Manager) checkWeakenings(ctx context.Context, cfg config.Config) ([]string, error) {
	return m.allowWeakenings(ctx, cfg.Weakenings())
}

// allowWeakenings is checkWeakenings for some of a config's weakenings.
func (m *Manager) allowWeakenings(ctx context.Context, ws []config.Weakening) ([]string, error) {
	// Each asked once, and only when a setting of that file needs it.
	trust := sync.OnceValues(m.trustState)
	localTracked := sync.OnceValue(func() bool {
		_, err := m.Git.Output(ctx, "ls-files", "--error-unmatch", "--", config.LocalFile)
		return err == nil
	})
	out := []string{}
	for _, w := range ws {
		switch {
		case w.File == "":
			continue // set by the caller, not by a file
		case w.Key == "docker.network" && w.Value == strconv.Quote("host") && w.File != FlagNetwork:
			return nil, &WeakeningError{Weakening: w}
		case w.File == config.LocalFile && localTracked():
			return nil, fmt.Errorf("%s sets %s, which loosens the sandbox, but git tracks %s, so it comes with the repository like %s: untrack it (git rm --cached %s) to keep it yours", w.File, w, config.LocalFile, config.File, config.LocalFile)
		case config.IsCommitted(w.File):
			state, err := trust()
			if err != nil {
				return nil, err
			}
			if state != Trusted {
				return nil, &WeakeningError{Weakening: w, State: state}
			}
			out = append(out, fmt.Sprintf("%s (%s, trusted)", w, w.File))
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s)", w, w.File))
	}
	return out, nil
}
