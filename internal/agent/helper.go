package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// FindHelper is the helper this Agent delivers.
func (m *Agent) FindHelper() (*helperbin.Binary, error) {
	if m.helperSource != nil {
		return m.helperSource()
	}
	return helperbin.Local()
}

// helperFor returns this Litterbox's helper for a sandbox, delivering it
// first when the sandbox has another build's (Litterbox was upgraded) and
// recording that it is there.
func (m *Agent) helperFor(ctx context.Context, slug string) (*helperbin.Binary, *layout.Record, error) {
	h, err := m.FindHelper()
	if err != nil {
		return nil, nil, err
	}
	if err := m.Repo.EnsureOwn(ctx, slug); err != nil {
		return nil, nil, err
	}
	want := h.ContainerPath()
	rec, err := m.Repo.Store().Load(slug)
	if err != nil {
		return nil, nil, err
	}
	if rec == nil {
		// A sandbox being deleted; the engine's answer to the exec will
		// say so.
		return h, &layout.Record{Name: slug}, nil
	}
	if rec.Helper == want {
		return h, rec, nil
	}
	if err := h.Deliver(ctx, m.Repo.Box(slug)); err != nil {
		if err := ExecError(ctx, m.Repo, slug, err); !strings.HasPrefix(err.Error(), "copying the sandbox helper") {
			return nil, nil, err // missing, paused, stopped
		}
		if rec.Helper == "" {
			return nil, nil, &LegacyError{Name: slug, Branch: m.Repo.Names(slug).Branch}
		}
		return nil, nil, err
	}
	rec.Helper = want
	if err := m.Repo.Store().Save(rec); err != nil {
		return nil, nil, err
	}
	return h, rec, nil
}

// PinHelper makes the Agent deliver the file at path as its helper under
// the fixed id, unchecked: record/replay tests need the same argv whatever
// the build. Recording needs a real static litterbox there.
func (m *Agent) PinHelper(path, id string) { m.UseHelper(helperbin.Pinned(path, id)) }

// UseHelper makes the Agent deliver h, a helper inspected elsewhere.
func (m *Agent) UseHelper(h *helperbin.Binary) {
	m.helperSource = func() (*helperbin.Binary, error) { return h, nil }
}

// LegacyError is a sandbox made before Litterbox had an in-sandbox helper:
// its container has no helper volume to deliver one into. Its work is safe
// on its branch.
type LegacyError struct{ Name, Branch string }

func (e *LegacyError) Error() string {
	keep := "litterbox-keep-" + e.Name
	return fmt.Sprintf("sandbox '%s' was made by an older Litterbox, which had no in-sandbox helper; its work is safe on %s. "+
		"To go on in a new sandbox from there: git branch %s %s && litterbox delete --force %s && litterbox create %s --base %s",
		e.Name, e.Branch, keep, e.Branch, e.Name, e.Name, keep)
}
