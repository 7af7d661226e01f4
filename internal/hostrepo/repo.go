// Package hostrepo is the host side of a repository that has sandboxes: the
// repository found and identified, its sandboxes' names, records, locks and
// ownership of engine resources, and the snapshot store each call commits
// through. It holds no lifecycle and no agent tool; those build on a Repo.
package hostrepo

import (
	"context"
	"errors"
	"fmt"
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

// Repo is one repository on the host and the engine its sandboxes run on.
type Repo struct {
	Root   string // work tree root
	GitDir string // common git dir: the repository's, whichever worktree Root is
	// RepoPath stands for the repository in labels and messages: its main
	// work tree's root.
	RepoPath string
	// RepoID makes this repository's resource names its own (see
	// layout.RepoID); "" when it could not be read or made (IDErr says why).
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
	// seq counts Seq's answers.
	seq atomic.Int64
	// ConfigErr is what was wrong with the config files when the repository
	// was opened; only create needs them, so other commands go on.
	ConfigErr error
	// FromFiles makes create read the config files afresh (a long-running
	// MCP server must see edits); otherwise config.Config is used as it is.
	FromFiles bool

	identOnce sync.Once
	ident     *gitcli.Ident
	// verified holds the containers OwnContainer found to be this
	// repository's: an agent's calls check once per server, not per call.
	verified sync.Map
	// worktrees are the repository's work tree roots (see worktreeRoots).
	worktreesOnce sync.Once
	worktrees     []string
	// Secrets reads secret values on the host, a command's once per
	// process.
	Secrets *secrets.Resolver
}

// OpenRepo is Open with the configuration of the repository's config files,
// read again by every create.
func OpenRepo(ctx context.Context, r runner.Runner, rt engine.Runtime, loc Location) (*Repo, error) {
	m, err := open(ctx, r, rt, loc, config.Default())
	if err != nil {
		return nil, err
	}
	m.FromFiles = true
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

// Open finds the repository at or above dir and returns it, using the
// runtime through r.
func Open(ctx context.Context, r runner.Runner, rt engine.Runtime, dir string, cfg config.Config) (*Repo, error) {
	return open(ctx, r, rt, Location{Dir: dir}, cfg)
}

func open(ctx context.Context, r runner.Runner, rt engine.Runtime, loc Location, cfg config.Config) (*Repo, error) {
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
	return &Repo{
		Root: p.Root, GitDir: p.CommonDir, RepoPath: path,
		RepoID: id, IDErr: idErr, RepoSlug: slug, Config: cfg,
		Git: g, Provider: rt.Provider(r), Runtime: rt, Now: time.Now,
		Secrets: &secrets.Resolver{Runner: r},
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

// Store is the repository's store of sandbox records.
func (r *Repo) Store() layout.Store { return r.Layout().Store() }

// Layout is where this repository keeps its Litterbox state.
func (r *Repo) Layout() layout.Layout { return layout.New(r.GitDir) }

// Seq is a number no earlier call on this Repo returned: with Now, it
// tells events of one process apart (a service's start token), the same
// on every run of a test.
func (r *Repo) Seq() int64 { return r.seq.Add(1) }

// RemoveHostState removes the snapshot state (and the private index an
// older release kept) and ignore mirror of a sandbox, returning what could
// not be removed.
func (r *Repo) RemoveHostState(slug string) []string {
	var left []string
	for _, p := range r.Layout().PerSandbox(slug) {
		if err := os.RemoveAll(p); err != nil {
			left = append(left, fmt.Sprintf("%s (%v)", p, err))
		}
	}
	return left
}

// Gone says whether no directory stands at path: a repository moved or
// deleted.
func Gone(path string) bool {
	fi, err := os.Stat(path)
	return err != nil || !fi.IsDir()
}

// Names returns the resource names for a slug in this repository. Those of
// an existing sandbox come from its record: they were made from the project
// slug of the time, which a later (or broken) config may not give.
func (r *Repo) Names(slug string) Names {
	n := NamesFor(r.RepoSlug, r.RepoID, slug)
	if rec, err := r.Store().Load(slug); err == nil && rec != nil && rec.Container != "" && rec.Volume != "" {
		// The id proves the container only to the repository that made
		// it: a copy of the git dir (cp -r) has the record, with the
		// original's container name and id, under an id of its own.
		own := rec.Container == n.Container
		n.Container, n.Volume, n.Pool = rec.Container, rec.Volume, rec.Pool
		if own && r.Provider.Caps().IDs && box.ValidID(rec.ContainerID) {
			n.ID = rec.ContainerID
		}
	}
	return n
}

// ShortID is a commit or image id cut to 12 characters, for messages.
func ShortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Labels say whose a resource of sandbox slug is; managed is "true" for
// the sandbox's own container and volume, the role of another (egress).
func (r *Repo) Labels(slug, managed string) map[string]string {
	return map[string]string{
		LabelManaged: managed, LabelRepo: r.RepoPath, LabelRepoID: r.RepoID, LabelRepoSlug: r.RepoSlug, LabelSandbox: slug,
	}
}

// CreateConfig is the configuration a new sandbox is made with.
func (r *Repo) CreateConfig() (config.Config, error) {
	if !r.FromFiles {
		return r.Config, nil
	}
	return config.Load(r.Root)
}
