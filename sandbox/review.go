package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/litterbox-dev/litterbox/config"
	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/review"
)

// base returns the sandbox's base commit and branch tip.
func (m *Manager) baseAndTip(ctx context.Context, name string) (slug, base, tip string, err error) {
	if slug, err = m.resolve(name); err != nil {
		return "", "", "", err
	}
	n := m.Names(slug)
	if tip, err = m.Git.RevParse(ctx, n.Ref); err != nil {
		return "", "", "", err
	}
	if tip == "" {
		return "", "", "", m.missingBranch(ctx, slug)
	}
	rec, err := m.store().load(slug)
	if err != nil {
		return "", "", "", err
	}
	if rec != nil && rec.Base != "" {
		return slug, rec.Base, tip, nil
	}
	// No record (made elsewhere): the fork point with HEAD is the best base.
	out, err := m.Git.Output(ctx, "merge-base", "HEAD", tip)
	if err != nil {
		return "", "", "", fmt.Errorf("cannot tell where %s starts: %w", n.Branch, err)
	}
	return slug, out, tip, nil
}

// Diff shows base..branch with extra git diff arguments (--stat, paths).
func (m *Manager) Diff(ctx context.Context, name string, extra []string, stdout, stderr io.Writer) error {
	w, err := m.work(ctx, name)
	if err != nil {
		return err
	}
	return review.Diff(ctx, m.Git, w, extra, stdout, stderr)
}

// Log shows the sandbox's commits since its base; patch adds each diff.
func (m *Manager) Log(ctx context.Context, name string, patch bool, extra []string, stdout, stderr io.Writer) error {
	w, err := m.work(ctx, name)
	if err != nil {
		return err
	}
	return review.Log(ctx, m.Git, w, patch, extra, stdout, stderr)
}

// Apply brings the sandbox's commits onto the current branch (see
// review.Apply). The sandbox stays.
func (m *Manager) Apply(ctx context.Context, name string, o review.Options) (*review.Applied, error) {
	w, err := m.work(ctx, name)
	if err != nil {
		return nil, err
	}
	if o.Tip != "" && o.Tip != w.Tip {
		return nil, fmt.Errorf("not applied: litterbox/%s moved from %s to %s since it was reviewed; review it again", w.Name, short(o.Tip), short(w.Tip))
	}
	return review.Apply(ctx, m.Git, w, o)
}

func (m *Manager) work(ctx context.Context, name string) (review.Work, error) {
	slug, base, tip, err := m.baseAndTip(ctx, name)
	return review.Work{Name: slug, Base: base, Tip: tip}, err
}

// Merge applies the sandbox's work and, only if that succeeded, deletes the
// sandbox.
func (m *Manager) Merge(ctx context.Context, name string, o review.Options) (*review.Applied, *Deleted, error) {
	// The delete needs the engine: without it, stop before applying rather
	// than apply and then fail half-way.
	if slug, err := m.resolve(name); err == nil {
		if _, err := m.Provider.Inspect(ctx, m.Names(slug).Container); err != nil && !errors.Is(err, dockercli.ErrNoSuchContainer) {
			return nil, nil, fmt.Errorf("merging sandbox '%s': %w", slug, err)
		}
	}
	a, err := m.Apply(ctx, name, o)
	if err != nil {
		return nil, nil, err
	}
	d, err := m.Delete(ctx, name, true)
	return a, d, err
}

// ControlChange is a file a sandbox's branch changes that steers sandboxes
// or programs on the host once it is merged, and what it steers.
type ControlChange struct {
	Path string `json:"path"`
	What string `json:"what"`
}

func (c ControlChange) String() string { return shown(c.Path) + " (" + c.What + ")" }

// controls says what the file at p (slash-separated, from the root)
// steers on the host, "" for an ordinary file.
func controls(p string) string {
	// Case-insensitive file systems (macOS) read .VSCODE as .vscode; a
	// directory may also arrive as a symlink of that name.
	p = strings.ToLower(p)
	base := path.Base(p)
	under := func(dirs ...string) bool {
		for _, d := range dirs {
			if p == d || strings.HasPrefix(p, d+"/") {
				return true
			}
		}
		return false
	}
	switch {
	case p == config.File || p == config.LocalFile:
		return "sandbox config"
	case p == ".devcontainer.json" || under(".devcontainer"):
		return "dev container config"
	case base == ".gitattributes":
		return "filters and diff drivers your git runs"
	case p == ".gitmodules":
		return "submodule URLs your git fetches"
	case p == ".mcp.json" || p == "opencode.json" || under(".claude", ".codex", ".cursor", ".zed", ".vscode"):
		return "agent or editor config"
	case base == ".envrc":
		return "run by direnv"
	}
	return ""
}

// ControlChanges lists the files the sandbox's branch changes (since its
// base) that steer sandboxes or programs on the host: review shows them
// before anything else, and merge asks first. tip is the branch tip they
// were read from, for Options.Tip.
func (m *Manager) ControlChanges(ctx context.Context, name string) (cs []ControlChange, tip string, err error) {
	w, err := m.work(ctx, name)
	if err != nil {
		return nil, "", err
	}
	out, err := m.Git.Output(ctx, "diff", "--name-only", "-z", "--no-renames", w.Base, w.Tip, "--")
	if err != nil {
		return nil, "", err
	}
	for _, p := range strings.Split(out, "\x00") {
		if what := controls(p); p != "" && what != "" {
			cs = append(cs, ControlChange{Path: p, What: what})
		}
	}
	return cs, w.Tip, nil
}
