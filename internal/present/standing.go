package present

import (
	"fmt"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/forecast"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// ReviewLine is where a sandbox's work stands in the review loop, with
// the first line of its latest message (an agent's summary is its own
// text: made inert for the terminal); "" for work in progress with
// nothing said.
func ReviewLine(r *sandbox.Review) string {
	if r == nil || r.Mark == "" {
		return ""
	}
	line := r.State
	if r.State != r.Mark {
		line = "working since it was " + r.Mark
	}
	if r.Message != "" {
		line += fmt.Sprintf(" (%s): %s", r.By, agenttext.Inert(agenttext.Elide(agenttext.FirstLine(r.Message), 200)))
	}
	return line
}

// MergeWord is the forecast in a word, for watch's MERGE column: a
// conflict with the branch first, then one with another sandbox, then how
// far behind the branch it is; "" with no forecast.
func MergeWord(f *forecast.Forecast) string {
	switch {
	case f == nil:
		return ""
	case !f.Clean:
		return "conflict"
	case len(f.ConflictsWith) > 0:
		return "clash"
	case f.Behind > 0:
		return fmt.Sprintf("%d behind", f.Behind)
	}
	return "clean"
}

// ForecastLine says how a sandbox's work would meet the branch it is
// taken onto and the other sandboxes' work; "" when there is nothing to
// watch for: the branch has not moved and no other sandbox changes its
// files. File names are the agent's: made inert.
func ForecastLine(f *forecast.Forecast) string {
	if f == nil || f.Behind == 0 && len(f.Overlaps) == 0 {
		return ""
	}
	var parts []string
	switch {
	case !f.Clean:
		parts = append(parts, fmt.Sprintf("would conflict with %s (%d commit(s) since its base) in %s", f.Onto, f.Behind, fileList(f.Conflicts)))
	case f.Behind > 0:
		parts = append(parts, fmt.Sprintf("%d commit(s) behind %s, merges cleanly", f.Behind, f.Onto))
	}
	if len(f.ConflictsWith) > 0 {
		parts = append(parts, "conflicts with "+strings.Join(f.ConflictsWith, ", "))
	}
	if others := slices.DeleteFunc(slices.Clone(f.Overlaps), func(n string) bool { return slices.Contains(f.ConflictsWith, n) }); len(others) > 0 {
		parts = append(parts, "changes the same files as "+strings.Join(others, ", "))
	}
	return strings.Join(parts, "; ")
}

// fileList names up to three files, then how many more.
func fileList(files []string) string {
	shown := files[:min(3, len(files))]
	out := agenttext.Inert(agenttext.Elide(strings.Join(shown, ", "), 300))
	if more := len(files) - len(shown); more > 0 {
		out += fmt.Sprintf(" and %d more", more)
	}
	return out
}
