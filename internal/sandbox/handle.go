package sandbox

import (
	"context"
	"errors"
	"fmt"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/textedit"
)

// Sandbox is one sandbox of the repository, its name resolved once. The
// calls that run something in it go through here: one that finds it
// stopped by PID 1 for being idle (agent.IdleError, having done nothing)
// starts it again as resume does, with its services, and is sent again.
// The agent layer below knows nothing of resume.
type Sandbox struct {
	m *Manager
	// Slug is the sandbox's name.
	Slug string
}

// Open resolves name to one of this repository's sandboxes.
func (m *Manager) Open(name string) (*Sandbox, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, err
	}
	return &Sandbox{m: m, Slug: slug}, nil
}

// awake runs call; when it found the sandbox stopped for being idle, it
// starts the sandbox again and runs call once more.
func awake[T any](ctx context.Context, s *Sandbox, call func() (T, error)) (T, error) {
	res, err := call()
	var idle *agent.IdleError
	if !errors.As(err, &idle) {
		return res, err
	}
	if _, werr := s.m.Resume(ctx, s.Slug); werr != nil {
		var none T
		return none, fmt.Errorf("sandbox '%s' stopped after being idle, and starting it again failed: %w", s.Slug, werr)
	}
	return call()
}

// Bash runs a command and commits what it changed (agent.Agent.Bash).
func (s *Sandbox) Bash(ctx context.Context, o agent.BashOptions) (*result.Act, error) {
	return awake(ctx, s, func() (*result.Act, error) { return s.m.Agent.Bash(ctx, s.Slug, o) })
}

// Write writes a file and commits it (agent.Agent.Write).
func (s *Sandbox) Write(ctx context.Context, path string, content []byte) (*result.Act, error) {
	return awake(ctx, s, func() (*result.Act, error) { return s.m.Agent.Write(ctx, s.Slug, path, content) })
}

// Edit applies edits to one file and commits it (agent.Agent.Edit).
func (s *Sandbox) Edit(ctx context.Context, path string, edits []textedit.Op) (*result.Edit, error) {
	return awake(ctx, s, func() (*result.Edit, error) { return s.m.Agent.Edit(ctx, s.Slug, path, edits) })
}

// Patch applies a unified diff to a file and commits it (agent.Agent.Patch).
func (s *Sandbox) Patch(ctx context.Context, path, diff string) (*result.Patch, error) {
	return awake(ctx, s, func() (*result.Patch, error) { return s.m.Agent.Patch(ctx, s.Slug, path, diff) })
}

// Upload copies a host file or directory in and commits it
// (agent.Agent.Upload); a second try reads the host's files again.
func (s *Sandbox) Upload(ctx context.Context, src, dest string) (*result.Act, error) {
	return awake(ctx, s, func() (*result.Act, error) { return s.m.Agent.Upload(ctx, s.Slug, src, dest) })
}

// Scan commits whatever changed outside the agent tools (agent.Agent.Scan).
func (s *Sandbox) Scan(ctx context.Context, kind, detail string) (*result.Act, error) {
	return awake(ctx, s, func() (*result.Act, error) { return s.m.Agent.Scan(ctx, s.Slug, kind, detail) })
}

// Exec runs a command as the sandbox user and returns its exit code
// (agent.Agent.Exec).
func (s *Sandbox) Exec(ctx context.Context, o agent.ExecOptions) (int, error) {
	return awake(ctx, s, func() (int, error) { return s.m.Agent.Exec(ctx, s.Slug, o) })
}

// Run runs a command until it exits, committing as it goes
// (agent.Agent.Run).
func (s *Sandbox) Run(ctx context.Context, o agent.RunOptions) (*result.Run, error) {
	return awake(ctx, s, func() (*result.Run, error) { return s.m.Agent.Run(ctx, s.Slug, o) })
}

// Read returns lines of a file, or an image (agent.Agent.Read).
func (s *Sandbox) Read(ctx context.Context, path string, offset, limit int) (*result.Read, error) {
	return awake(ctx, s, func() (*result.Read, error) { return s.m.Agent.Read(ctx, s.Slug, path, offset, limit) })
}

// Ls lists a directory, and whether the list was cut (agent.Agent.Ls).
func (s *Sandbox) Ls(ctx context.Context, path string, recursive bool) ([]result.Entry, bool, error) {
	var cut bool
	entries, err := awake(ctx, s, func() (e []result.Entry, err error) {
		e, cut, err = s.m.Agent.Ls(ctx, s.Slug, path, recursive)
		return e, err
	})
	return entries, cut, err
}

// Glob finds the paths that match a pattern, and whether the list was cut
// (agent.Agent.Glob).
func (s *Sandbox) Glob(ctx context.Context, pattern, path string) ([]string, bool, error) {
	var cut bool
	paths, err := awake(ctx, s, func() (p []string, err error) {
		p, cut, err = s.m.Agent.Glob(ctx, s.Slug, pattern, path)
		return p, err
	})
	return paths, cut, err
}

// Grep finds the lines that match a pattern, and whether the list was cut
// (agent.Agent.Grep).
func (s *Sandbox) Grep(ctx context.Context, pattern, path, include string) ([]result.Match, bool, error) {
	var cut bool
	matches, err := awake(ctx, s, func() (ms []result.Match, err error) {
		ms, cut, err = s.m.Agent.Grep(ctx, s.Slug, pattern, path, include)
		return ms, err
	})
	return matches, cut, err
}

// Download copies a file or directory out to the host path dest
// (agent.Agent.Download); it returns how many entries it wrote.
func (s *Sandbox) Download(ctx context.Context, src, dest string) (int, error) {
	return awake(ctx, s, func() (int, error) { return s.m.Agent.Download(ctx, s.Slug, src, dest) })
}
