package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/litterbox-dev/litterbox/config"
	"github.com/litterbox-dev/litterbox/dockercli"
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

// projectImage gives cfg.Build's image a tag named by a digest of its
// inputs (the Dockerfile, the context's files, target and arguments), and
// builds it unless the engine has that tag already: an unchanged project
// costs one image inspect. cfg.Image becomes the tag.
func (m *Manager) projectImage(ctx context.Context, cfg *config.Config) (*BuiltImage, error) {
	b := cfg.Build
	tag, err := m.projectImageTag(b)
	if err != nil {
		return nil, err
	}
	cfg.Image = tag
	out := &BuiltImage{Tag: tag, Dockerfile: b.Dockerfile}
	if _, err := m.Provider.Image(ctx, tag); err == nil {
		out.Cached = true
		return out, nil
	} else if !errors.Is(err, dockercli.ErrImageNotFound) {
		return nil, err
	}
	t := time.Now()
	tail := &tailWriter{max: buildTailLines}
	var w io.Writer = tail
	if m.BuildOutput != nil {
		w = io.MultiWriter(tail, m.BuildOutput)
	}
	spec := dockercli.BuildSpec{
		Dockerfile: m.rootPath(b.Dockerfile), Context: m.rootPath(b.Context), Tag: tag, Target: b.Target, Args: b.Args,
		Labels: map[string]string{LabelRepoID: m.RepoID, LabelRepo: m.RepoPath},
	}
	if err := m.Provider.Build(ctx, spec, w); err != nil {
		return nil, &BuildError{Dockerfile: b.Dockerfile, Err: err, Tail: tail.String()}
	}
	out.Took = time.Since(t)
	m.step("build "+b.Dockerfile+" as "+tag, t)
	return out, nil
}

// projectImageTag is the tag of b's image: the repository's, named by a
// digest of the build's inputs.
func (m *Manager) projectImageTag(b *config.BuildSpec) (string, error) {
	dockerfile, contextDir := m.rootPath(b.Dockerfile), m.rootPath(b.Context)
	if fi, err := os.Stat(dockerfile); err != nil || fi.IsDir() {
		return "", fmt.Errorf("[docker] build: no Dockerfile at %s", b.Dockerfile)
	}
	if fi, err := os.Stat(contextDir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("[docker] build: the context %s is not a directory", b.Context)
	}
	digest, err := buildDigest(dockerfile, contextDir, b)
	if err != nil {
		return "", fmt.Errorf("[docker] build: reading the build's inputs: %w", err)
	}
	return "litterbox/" + m.RepoSlug + "-" + m.RepoID + ":" + digest[:16], nil
}

func (m *Manager) rootPath(rel string) string { return filepath.Join(m.Root, filepath.FromSlash(rel)) }

// buildDigest names a build by what goes into it. The context's files
// count by path, mode, size and modification time (reading every byte of
// a large context on each create would cost more than the build cache it
// saves); .dockerignore's patterns leave files out as docker leaves them.
func buildDigest(dockerfile, contextDir string, b *config.BuildSpec) (string, error) {
	h := sha256.New()
	df, err := os.ReadFile(dockerfile)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "litterbox build v1\x00dockerfile %d\x00", len(df))
	h.Write(df)
	fmt.Fprintf(h, "\x00target %s\x00", b.Target)
	for _, k := range slices.Sorted(maps.Keys(b.Args)) {
		fmt.Fprintf(h, "arg %s=%s\x00", k, b.Args[k])
	}
	ignore := readDockerignore(contextDir)
	err = filepath.WalkDir(contextDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(contextDir, p)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.IsDir() && (rel == ".git" || ignore.skipDir(rel)) {
			return filepath.SkipDir
		}
		if ignore.ignored(rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %o %d %d\x00", rel, info.Mode(), info.Size(), info.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// dockerignore is a context's .dockerignore: the last pattern that matches
// a path decides, and "!" lets a path back in.
type dockerignore struct {
	patterns []string
	negated  bool // some pattern starts with "!": no directory may be skipped whole
}

func readDockerignore(contextDir string) dockerignore {
	data, err := os.ReadFile(filepath.Join(contextDir, ".dockerignore"))
	if err != nil {
		return dockerignore{}
	}
	var di dockerignore
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		neg := strings.HasPrefix(line, "!")
		p := path.Clean(strings.TrimPrefix(strings.TrimPrefix(line, "!"), "/"))
		if neg {
			di.negated = true
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

func (di dockerignore) skipDir(rel string) bool { return !di.negated && di.ignored(rel) }

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
