// Package sandbox is the core of Litterbox: sandbox names, the lifecycle
// (create, list, pause, resume, delete) and command execution, over a container
// Provider and git.
package sandbox

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/litterbox-dev/litterbox/config"
	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/gitcli"
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
	Root     string // work tree root
	GitDir   string // common git dir
	RepoSlug string
	Config   config.Config
	Git      *gitcli.Client
	Provider Provider
	// Runtime is the engine CLI the Provider drives, for messages.
	Runtime Runtime
	// Now is the clock, replaceable in tests.
	Now func() time.Time
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
	// startSeq tells service starts apart (see startServices).
	startSeq atomic.Int64
}

// OpenRepo is Open with the configuration of the repository's config files,
// read again by every create.
func OpenRepo(ctx context.Context, r runner.Runner, rt Runtime, dir string) (*Manager, error) {
	m, err := Open(ctx, r, rt, dir, config.Default())
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

// Runtime is the container engine CLI to drive.
type Runtime struct {
	Bin string // docker, podman, or a path to one
	// Global options for every command, e.g. --context NAME or --host URL.
	Global []string
}

// Docker is the default runtime.
var Docker = Runtime{Bin: "docker"}

// Open finds the repository at or above dir and returns its Manager, using the
// runtime through r.
func Open(ctx context.Context, r runner.Runner, rt Runtime, dir string, cfg config.Config) (*Manager, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	g := gitcli.New(abs, r)
	root, common, err := g.Repo(ctx)
	if err != nil {
		return nil, err
	}
	g.Dir = root
	slug := cfg.ProjectSlug
	if slug == "" {
		slug = RepoSlug(filepath.Base(root))
	}
	return &Manager{
		Root: root, GitDir: common, RepoSlug: slug, Config: cfg,
		Git: g, Provider: rt.client(r), Runtime: rt, Now: time.Now,
	}, nil
}

func (m *Manager) store() store { return store{dir: filepath.Join(m.GitDir, "litterbox", "sandboxes")} }

// Names returns the resource names for a slug in this repository. Those of
// an existing sandbox come from its record: they were made from the project
// slug of the time, which a later (or broken) config may not give.
func (m *Manager) Names(slug string) Names {
	n := NamesFor(m.RepoSlug, slug)
	if rec, err := m.store().load(slug); err == nil && rec != nil && rec.Container != "" && rec.Volume != "" {
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

func (rt Runtime) client(r runner.Runner) *dockercli.Client {
	c := dockercli.New(rt.Bin, r)
	c.Global = rt.Global
	return c
}
