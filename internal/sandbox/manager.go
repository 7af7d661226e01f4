// Package sandbox is the core of Litterbox: sandbox names, the lifecycle
// (create, list, pause, resume, delete) and command execution, over a container
// Provider and git.
package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/secrets"
	"github.com/litterbox-dev/litterbox/runner"
)

// Labels put on every container Litterbox creates, so `docker ps` alone can
// answer list.
const (
	LabelManaged  = "dev.litterbox.managed"
	LabelRepo     = "dev.litterbox.repo"
	LabelRepoSlug = "dev.litterbox.repo-slug"
	LabelSandbox  = "dev.litterbox.sandbox"
	LabelBase     = "dev.litterbox.base"
)

// Workdir is where the repository copy lives inside every sandbox.
const Workdir = "/src"

// Manager runs the sandbox lifecycle for one repository.
type Manager struct {
	Root   string // work tree root
	GitDir string // common git dir: the repository's, whichever worktree Root is
	// RepoPath stands for the repository in labels and messages: its main
	// work tree's root.
	RepoPath string
	// RepoID makes this repository's resource names its own (see
	// repoIdentity); "" when it could not be read or made (IDErr says why).
	RepoID   string
	IDErr    error
	RepoSlug string
	Config   config.Config
	Git      *gitcli.Client
	Provider box.Provider
	// Runtime is the engine CLI the Provider drives, for messages.
	Runtime engine.Runtime
	// Now is the clock, replaceable in tests.
	Now func() time.Time
	// BuildOutput, when set, receives a project image's build log as it
	// is made (a terminal); otherwise only a failed build's tail is shown.
	BuildOutput io.Writer
	// Progress, when set, is told about each create step as it finishes.
	Progress func(step string, took time.Duration)
	// ConfigErr is what was wrong with the config files when the repository
	// was opened; only create needs them, so other commands go on.
	ConfigErr error
	// portStart and portFree, when set, replace the random start of the
	// port search and the host check (tests need the same ports every run).
	portStart func(span int) int
	portFree  func(port int) bool
	// fromFiles makes create read the config files afresh (a long-running
	// MCP server must see edits); otherwise config.Config is used as it is.
	fromFiles bool

	// helper is the sandbox helper binary create delivers, found by
	// preflight.
	helper *helperBinary
	// helperSource, when set, replaces the lookup of the helper binary
	// (replay tests need one id whatever the build).
	helperSource func() (*helperBinary, error)

	identOnce sync.Once
	ident     *gitcli.Ident
	// verified holds the containers ownContainer found to be this
	// repository's: an agent's calls check once per server, not per call.
	verified sync.Map
	// worktrees are the repository's work tree roots (see worktreeRoots).
	worktreesOnce sync.Once
	worktrees     []string
	// startSeq tells service starts apart (see startServices).
	startSeq atomic.Int64
	// secrets reads secret values on the host, a command's once per
	// process.
	secrets *secrets.Resolver
}

// OpenRepo is Open with the configuration of the repository's config files,
// read again by every create.
func OpenRepo(ctx context.Context, r runner.Runner, rt engine.Runtime, loc Location) (*Manager, error) {
	m, err := open(ctx, r, rt, loc, config.Default())
	if err != nil {
		return nil, err
	}
	m.fromFiles = true
	cfg, err := config.Load(m.Root)
	if err != nil {
		m.ConfigErr = err
		return m, nil
	}
	m.Config = cfg
	if cfg.ProjectSlug != "" {
		m.RepoSlug = cfg.ProjectSlug
	}
	return m, nil
}

// Location names a repository to open: a directory at or below its work
// tree's root, or, as git's GIT_DIR and GIT_WORK_TREE do, its git dir and
// work tree (absolute paths).
type Location struct {
	Dir      string
	GitDir   string
	WorkTree string
}

// Open finds the repository at or above dir and returns its Manager, using the
// runtime through r.
func Open(ctx context.Context, r runner.Runner, rt engine.Runtime, dir string, cfg config.Config) (*Manager, error) {
	return open(ctx, r, rt, Location{Dir: dir}, cfg)
}

func open(ctx context.Context, r runner.Runner, rt engine.Runtime, loc Location, cfg config.Config) (*Manager, error) {
	abs, err := filepath.Abs(loc.Dir)
	if err != nil {
		return nil, err
	}
	g := gitcli.New(abs, r)
	if loc.GitDir != "" {
		g.Global = append(g.Global, "--git-dir="+loc.GitDir)
	}
	if loc.WorkTree != "" {
		g.Global = append(g.Global, "--work-tree="+loc.WorkTree)
	}
	p, err := g.Repo(ctx)
	if err != nil {
		return nil, repoError(err)
	}
	g.Dir = p.Root
	g.Global = nil
	if loc.GitDir != "" || loc.WorkTree != "" || !pathExists(filepath.Join(p.Root, ".git")) {
		// GIT_DIR, GIT_WORK_TREE or core.worktree: git cannot find the
		// repository from the work tree alone, so every call names both.
		g.Global = []string{"--git-dir=" + p.GitDir, "--work-tree=" + p.Root}
	}
	path := repoPath(p.Root, p.GitDir, p.CommonDir)
	slug := cfg.ProjectSlug
	if slug == "" {
		slug = RepoSlug(filepath.Base(path))
	}
	id, idErr := layout.RepoID(p.CommonDir)
	var damaged *layout.DamagedIDError
	if errors.As(idErr, &damaged) {
		return nil, idErr
	}
	return &Manager{
		Root: p.Root, GitDir: p.CommonDir, RepoPath: path,
		RepoID: id, IDErr: idErr, RepoSlug: slug, Config: cfg,
		Git: g, Provider: rt.Provider(r), Runtime: rt, Now: time.Now,
		secrets: &secrets.Resolver{Runner: r},
	}, nil
}

// RepoError is a directory Litterbox cannot work in, with what to do.
type RepoError struct {
	Err error
	Fix string
}

func (e *RepoError) Error() string { return e.Err.Error() + ": " + e.Fix }
func (e *RepoError) Unwrap() error { return e.Err }

// repoError says what to do about a directory Litterbox cannot work in.
func repoError(err error) error {
	switch {
	case errors.Is(err, gitcli.ErrBare):
		return &RepoError{err, "a sandbox is copied from a work tree and a bare repository has none; run litterbox in a clone of it, or in a worktree (git worktree add ../NAME)"}
	case errors.Is(err, gitcli.ErrInGitDir):
		return &RepoError{err, "run litterbox in the work tree"}
	case errors.Is(err, gitcli.ErrNotARepo):
		return &RepoError{err, "run litterbox inside a git repository (or git init one), or name one with --repo DIR"}
	}
	return err
}

func pathExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func (m *Manager) store() layout.Store { return m.layout().Store() }

// layout is where this repository keeps its Litterbox state.
func (m *Manager) layout() layout.Layout { return layout.New(m.GitDir) }

// Names returns the resource names for a slug in this repository. Those of
// an existing sandbox come from its record: they were made from the project
// slug of the time, which a later (or broken) config may not give.
func (m *Manager) Names(slug string) Names {
	n := NamesFor(m.RepoSlug, m.RepoID, slug)
	if rec, err := m.store().Load(slug); err == nil && rec != nil && rec.Container != "" && rec.Volume != "" {
		n.Container, n.Volume = rec.Container, rec.Volume
	}
	return n
}

func (m *Manager) step(name string, start time.Time) {
	if m.Progress != nil {
		m.Progress(name, time.Since(start))
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
