package image

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/tarstream"
	"github.com/litterbox-dev/litterbox/runner"
)

// BuildError is a project image that would not build: the tail of the
// build's log says why.
type BuildError struct {
	Dockerfile string
	Err        error
	Tail       string
}

func (e *BuildError) Error() string {
	// The build's own words are in its log's tail; the exit error's
	// first line is only the builder's banner.
	why := e.Err.Error()
	var ee *runner.ExitError
	if errors.As(e.Err, &ee) {
		why = fmt.Sprintf("the build exited with code %d", ee.Result.ExitCode)
	}
	msg := fmt.Sprintf("building %s failed: %s", e.Dockerfile, why)
	if e.Tail != "" {
		msg += "; the end of its log:\n" + e.Tail
	}
	return msg
}

func (e *BuildError) Unwrap() error { return e.Err }

// buildTailLines is how much of a failed build's log the error shows.
const buildTailLines = 20

// BuiltImage says how the project's image came about.
type BuiltImage struct {
	Tag        string        `json:"tag"`
	Dockerfile string        `json:"dockerfile"`
	Cached     bool          `json:"cached"` // the tag existed: no build ran
	Took       time.Duration `json:"-"`
}

// Project gives cfg.Build's image a tag named by a digest of its
// inputs as commit holds them (the Dockerfile, the context's files,
// target, arguments and network), and builds it unless the engine has that
// tag already: an unchanged project costs one ls-tree and one image
// inspect. The build reads only the commit, never the host's work tree: a
// file that is untracked, ignored or not yet committed (.env, .git) is not
// in its context. cfg.Image becomes the tag. A commit that is not a
// person's (persons false: hostrepo.Persons) builds with no network, under
// a tag of its own.
func (im *Builder) Project(ctx context.Context, cfg *config.Config, commit string, persons bool) (*BuiltImage, error) {
	b := cfg.Build
	in, err := im.ReadInputs(ctx, b, commit)
	if err != nil {
		return nil, err
	}
	if config.IsCommitted(cfg.From["docker.build"]) {
		if err := im.CheckBuildTrust(in); err != nil {
			return nil, err
		}
	}
	network := buildNetwork(*cfg)
	if !persons {
		network = "none"
	}
	tag := im.buildTag(in, network)
	cfg.Image = tag
	out := &BuiltImage{Tag: tag, Dockerfile: b.Dockerfile}
	if _, err := box.Images(im.Repo.Provider).Image(ctx, tag); err == nil {
		out.Cached = true
		return out, nil
	} else if !errors.Is(err, box.ErrImageNotFound) {
		return nil, err
	}
	t := time.Now()
	if err := im.build(ctx, in, tag, network, !persons); err != nil {
		return nil, err
	}
	out.Took = time.Since(t)
	if im.Progress != nil {
		im.Progress("build "+b.Dockerfile+" of "+hostrepo.ShortID(commit)+" as "+tag, time.Since(t))
	}
	return out, nil
}

// build streams in's context from git into the engine's build, never
// holding it in memory or on disk: the context is the checkout of its
// tree, with the attributes of the user's work tree when yours (the
// commit is an agent's: gitcli.CheckoutTar).
func (im *Builder) build(ctx context.Context, in *Inputs, tag, network string, yours bool) error {
	b := in.Spec
	tail := &tailWriter{max: buildTailLines}
	var w io.Writer = tail
	if im.Output != nil {
		w = io.MultiWriter(tail, im.Output)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	archR, archW := io.Pipe()
	tarR, tarW := io.Pipe()
	gitDone, filterDone := make(chan struct{}), make(chan error, 1)
	go func() {
		// A failure of git's reaches the filter through the pipe; one after
		// the archive's end is only git writing padding nobody reads.
		archW.CloseWithError(im.checkoutTar(ctx, in.contextTree(), yours, archW))
		close(gitDone)
	}()
	go func() {
		err := in.filterContext(ctx, im, tarW, archR)
		archR.CloseWithError(tarstream.OrStopped(err))
		tarW.CloseWithError(err)
		filterDone <- err
	}()
	spec := box.BuildSpec{
		Dockerfile: in.dockerfileInContext(), Context: tarR, Tag: tag, Target: b.Target, Args: b.Args, Network: network,
		Labels: map[string]string{hostrepo.LabelRepoID: im.Repo.RepoID, hostrepo.LabelRepo: im.Repo.RepoPath},
	}
	err := box.Images(im.Repo.Provider).Build(ctx, spec, w)
	// The engine may stop reading at the archive's end marker.
	tarR.CloseWithError(tarstream.ErrStopped)
	if err != nil {
		cancel()
	}
	<-gitDone
	if ferr := <-filterDone; err == nil && ferr != nil && !errors.Is(ferr, tarstream.ErrStopped) {
		err = fmt.Errorf("streaming the build context of commit %s: %w", hostrepo.ShortID(in.Commit), ferr)
	}
	if err != nil {
		return &BuildError{Dockerfile: b.Dockerfile, Err: err, Tail: tail.String()}
	}
	return nil
}

// buildNetwork is the network of the build's RUN steps: the one the setup
// command may have, since both run the repository's commands before any
// agent does, and none otherwise. An allowlist has no proxy at build time,
// and the host's network is the command line's for one sandbox, not for an
// image others share: both build with none.
func buildNetwork(cfg config.Config) string {
	switch {
	case cfg.SetupOpensNetwork():
		return cfg.OutboundNetwork()
	case cfg.Allow != nil, cfg.Network == "none", cfg.Network == "host":
		return "none"
	}
	return cfg.Network
}

// ProjectTag is the tag commit's build of b would have, for the
// cache and doctor, which look without building.
func (im *Builder) ProjectTag(ctx context.Context, cfg config.Config, commit string) (string, error) {
	in, err := im.ReadInputs(ctx, cfg.Build, commit)
	if err != nil {
		return "", err
	}
	return im.buildTag(in, buildNetwork(cfg)), nil
}

// buildTag is the repository's tag of a build of in on network.
func (im *Builder) buildTag(in *Inputs, network string) string {
	return "litterbox/" + im.Repo.RepoSlug + "-" + im.Repo.RepoID + ":" + in.digest(network)[:16]
}

// buildContextName is where a Dockerfile from outside the context goes in
// the context's archive.
const buildContextName = ".litterbox.Dockerfile"

// Inputs are a build's inputs as one commit holds them.
type Inputs struct {
	Spec   *config.BuildSpec
	Commit string
	// dockerfile is the Dockerfile's blob id; inside says it lies in the
	// context (and so reaches the build under its own name).
	dockerfile string
	inside     bool
	// ignoreID is the context's .dockerignore's blob id, "" without one.
	ignoreID string
	ignore   dockerignore
	// files are the context's entries docker gets, "mode id path" with the
	// path relative to the context.
	files []string
}

// ReadInputs reads b's inputs from commit: one ls-tree of the context
// and the Dockerfile, and the .dockerignore's blob when there is one.
func (im *Builder) ReadInputs(ctx context.Context, b *config.BuildSpec, commit string) (*Inputs, error) {
	args := []string{"--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", commit}
	if b.Context != "." {
		args = append(args, "--", b.Context, b.Dockerfile)
	}
	out, err := im.Repo.Git.Output(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("[docker] build: reading commit %s: %w", hostrepo.ShortID(commit), err)
	}
	in, ctxFiles := parseBuildTree(out, b, commit)
	if in.dockerfile == "" {
		return nil, fmt.Errorf("[docker] build: no Dockerfile at %s in commit %s; the build reads only committed files: commit it first", b.Dockerfile, hostrepo.ShortID(commit))
	}
	if len(ctxFiles) == 0 {
		return nil, fmt.Errorf("[docker] build: the context %s is not a directory with files in commit %s", b.Context, hostrepo.ShortID(commit))
	}
	if in.ignoreID != "" {
		data, err := im.Repo.Git.CatBlob(ctx, in.ignoreID)
		if err != nil {
			return nil, fmt.Errorf("[docker] build: reading %s: %w", path.Join(b.Context, ".dockerignore"), err)
		}
		in.ignore = parseDockerignore(data)
	}
	in.keep(ctxFiles)
	return in, nil
}

// parseBuildTree reads an `ls-tree -r -z --full-tree` listing of commit
// for b's Dockerfile and .dockerignore, and returns the context's files,
// "mode id" by path relative to the context.
func parseBuildTree(listing string, b *config.BuildSpec, commit string) (*Inputs, map[string]string) {
	in := &Inputs{Spec: b, Commit: commit}
	ctxFiles := map[string]string{}
	for _, line := range strings.Split(listing, "\x00") {
		meta, p, ok := strings.Cut(line, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 {
			continue
		}
		mode, typ, id := f[0], f[1], f[2]
		if p == b.Dockerfile && typ == "blob" && mode != "120000" {
			in.dockerfile = id
		}
		rel, under := relUnder(b.Context, p)
		if !under || typ != "blob" {
			continue // outside the context, or a submodule, which git archive leaves empty
		}
		ctxFiles[rel] = mode + " " + id
		if rel == ".dockerignore" {
			in.ignoreID = id
		}
	}
	_, in.inside = relUnder(b.Context, b.Dockerfile)
	return in, ctxFiles
}

// keep records the context's files that docker gets, in path order.
func (in *Inputs) keep(ctxFiles map[string]string) {
	in.files = nil
	for _, rel := range slices.Sorted(maps.Keys(ctxFiles)) {
		if in.sends(rel) {
			in.files = append(in.files, ctxFiles[rel]+" "+rel)
		}
	}
}

// relUnder is p relative to dir, and whether p lies under dir ("." is the
// root).
func relUnder(dir, p string) (string, bool) {
	if dir == "." {
		return p, true
	}
	rel, ok := strings.CutPrefix(p, dir+"/")
	return rel, ok
}

// sends says whether the context's file rel goes to the engine: not when
// .dockerignore leaves it out, except the Dockerfile and .dockerignore,
// which docker always sends.
func (in *Inputs) sends(rel string) bool {
	if rel == buildContextName && !in.inside {
		return false
	}
	if rel == ".dockerignore" || (in.inside && rel == in.dockerfileInContext()) {
		return true
	}
	return !in.ignore.ignored(rel)
}

// dockerfileInContext is the Dockerfile's path inside the context archive.
func (in *Inputs) dockerfileInContext() string {
	if rel, ok := relUnder(in.Spec.Context, in.Spec.Dockerfile); ok {
		return rel
	}
	return buildContextName
}

// checkoutTar writes the checkout of tree to w through a git dir made for
// it in the repository's temp dir (gitcli.ArchiveDir), removed after.
func (im *Builder) checkoutTar(ctx context.Context, tree string, yours bool, w io.Writer) error {
	if err := os.MkdirAll(im.Repo.Layout().Tmp(), 0o755); err != nil {
		return err
	}
	parent, err := os.MkdirTemp(im.Repo.Layout().Tmp(), "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(parent)
	dir := filepath.Join(parent, "archive")
	if err := gitcli.ArchiveDir(im.Repo.GitDir, dir); err != nil {
		return err
	}
	return im.Repo.Git.CheckoutTar(ctx, dir, tree, yours, w)
}

// contextTree is the tree-ish whose archive is the context.
func (in *Inputs) contextTree() string {
	if in.Spec.Context == "." {
		return in.Commit
	}
	return in.Commit + ":" + in.Spec.Context
}

// digest names a build of in on network by what goes into it: every file
// the context sends, by blob id, so an unchanged context hits the image
// already built whatever else the commit changes.
func (in *Inputs) digest(network string) string {
	h := sha256.New()
	b := in.Spec
	fmt.Fprintf(h, "litterbox build v2\x00dockerfile %s %s\x00target %s\x00network %s\x00", in.dockerfileInContext(), in.dockerfile, b.Target, network)
	for _, k := range slices.Sorted(maps.Keys(b.Args)) {
		fmt.Fprintf(h, "arg %s=%s\x00", k, b.Args[k])
	}
	for _, f := range in.files {
		fmt.Fprintf(h, "%s\x00", f)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TrustDigest is what `litterbox trust` allows of a build: the Dockerfile
// and .dockerignore, by path and blob id. The context's other files are
// data the Dockerfile names; covering them would ask for trust again at
// every commit of a project built from its root, which teaches trusting
// blindly.
func (in *Inputs) TrustDigest() string {
	h := sha256.New()
	fmt.Fprintf(h, "litterbox build trust v1\x00%s\x00%s\x00%s\x00%s\x00", in.Spec.Dockerfile, in.dockerfile, in.Spec.Context, in.ignoreID)
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// filterContext copies git's archive of the context from r to w, leaving
// out what .dockerignore leaves out (docker applies it only to a directory
// it reads itself, not to an archive on stdin) and adding a Dockerfile
// from outside the context.
func (in *Inputs) filterContext(ctx context.Context, m *Builder, w io.Writer, r io.Reader) error {
	tr, tw := tar.NewReader(r), tar.NewWriter(w)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader || !in.sends(strings.TrimSuffix(hdr.Name, "/")) {
			continue
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
	if !in.inside {
		data, err := m.Repo.Git.CatBlob(ctx, in.dockerfile)
		if err != nil {
			return err
		}
		hdr := &tar.Header{Name: buildContextName, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// dockerignore is a context's .dockerignore: the last pattern that matches
// a path decides, and "!" lets a path back in.
type dockerignore struct {
	patterns []string
}

func parseDockerignore(data []byte) dockerignore {
	var di dockerignore
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		neg := strings.HasPrefix(line, "!")
		p := path.Clean(strings.TrimPrefix(strings.TrimPrefix(line, "!"), "/"))
		if neg {
			p = "!" + p
		}
		di.patterns = append(di.patterns, p)
	}
	return di
}

func (di dockerignore) ignored(rel string) bool {
	out := false
	for _, p := range di.patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		if matchUnder(p, rel) {
			out = !neg
		}
	}
	return out
}

// matchUnder: pattern p matches rel or one of its parent directories.
func matchUnder(p, rel string) bool {
	for q := rel; q != "." && q != "/"; q = path.Dir(q) {
		if ok, _ := doublestar.Match(p, q); ok {
			return true
		}
	}
	return false
}

// tailWriter keeps the last max lines written to it.
type tailWriter struct {
	mu    sync.Mutex
	max   int
	lines []string
	part  []byte
}

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.part = append(t.part, p...)
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		t.lines = append(t.lines, string(t.part[:i]))
		t.part = t.part[i+1:]
		if len(t.lines) > t.max {
			t.lines = t.lines[len(t.lines)-t.max:]
		}
	}
	return len(p), nil
}

func (t *tailWriter) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := t.lines
	if len(t.part) > 0 {
		lines = append(slices.Clone(lines), string(t.part))
	}
	if len(lines) > t.max {
		lines = lines[len(lines)-t.max:]
	}
	return strings.Join(lines, "\n")
}
