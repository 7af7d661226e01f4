package present

import (
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// Synced says in one line what a sync did.
func Synced(s *sandbox.Synced) string {
	onto := fmt.Sprintf("%s (%s)", agenttext.Shown(s.OntoName), hostrepo.ShortID(s.Onto))
	if s.UpToDate {
		return fmt.Sprintf("Sandbox '%s' already starts from %s; nothing to sync.", s.Name, onto)
	}
	line := fmt.Sprintf("Synced sandbox '%s' onto %s: %d commit(s) replayed", s.Name, onto, s.Replayed)
	if s.Dropped > 0 {
		line += fmt.Sprintf(", %d dropped (already there)", s.Dropped)
	}
	line += fmt.Sprintf("; litterbox/%s is at %s.", s.Name, hostrepo.ShortID(s.To))
	if n := len(s.Conflicts); n > 0 {
		shown := make([]string, 0, 5)
		for _, p := range s.Conflicts[:min(n, 5)] {
			shown = append(shown, agenttext.Shown(p))
		}
		if n > len(shown) {
			shown = append(shown, fmt.Sprintf("and %d more", n-len(shown)))
		}
		line += fmt.Sprintf(" Conflicts in %s: committed with their markers, and so in /src.", strings.Join(shown, ", "))
	}
	if s.Note != "" {
		line += " /src could not be brought all the way (" + agenttext.Shown(s.Note) + "); what it holds is committed."
	}
	return line
}
