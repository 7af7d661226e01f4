package sandbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/forecast"
	"github.com/litterbox-dev/litterbox/internal/review"
)

// Forecast fills each of list's sandboxes of this repository with how its
// work would meet the host's HEAD, which apply and merge take it onto,
// and the others' (internal/forecast): from git objects alone, cached by
// commit ids in the repository's Litterbox state.
func (m *Manager) Forecast(ctx context.Context, list []Info) error {
	var works []forecast.Work
	at := map[string]int{}
	for i, s := range list {
		if !s.ours || s.Base == "" || s.tip == "" {
			continue
		}
		works = append(works, forecast.Work{Name: s.Name, Base: s.Base, Tip: s.tip})
		at[s.Name] = i
	}
	if len(works) == 0 {
		return nil
	}
	// HEAD's commit and its branch's name in one git: list and every
	// refresh of watch ask.
	out, err := m.Repo.Git.Output(ctx, "rev-parse", "HEAD", "--abbrev-ref", "HEAD")
	if err != nil {
		return fmt.Errorf("reading HEAD to forecast onto: %w", err)
	}
	target, onto, _ := strings.Cut(out, "\n")
	if len(target) < 12 {
		return fmt.Errorf("HEAD names no commit to forecast onto")
	}
	if onto == "" || onto == "HEAD" {
		onto = target[:12]
	}
	t := &forecast.Teller{Git: review.Sealed(m.Repo.Git), Cache: forecast.OpenCache(m.Repo.Layout().Forecast())}
	got, err := t.Tell(ctx, target, works)
	if err != nil {
		return err
	}
	for name, f := range got {
		f.Onto = onto
		list[at[name]].Forecast = &f
	}
	return t.Cache.Save()
}
