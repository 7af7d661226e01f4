package result

import (
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
)

// Bounds is what a call's result says of the limits on what reaches the
// host: files left out of its snapshot, and /src over its disk guard.
type Bounds struct {
	Withheld []snapshot.Withheld `json:"withheld,omitempty"`
	// WithheldMore counts the withheld files beyond those listed.
	WithheldMore int       `json:"withheld_more,omitempty"`
	DiskOver     *DiskOver `json:"disk_over,omitempty"`
	// ConfigNote says why the config's bounds were not used (those fixed
	// at create were).
	ConfigNote string `json:"config_note,omitempty"`
	// MaxCall is the call's budget, to tell of a file larger than it.
	MaxCall int64 `json:"-"`
	// Unfiltered are files committed as written: the filter their
	// .gitattributes name is not one your own attributes give them, so it
	// did not run on the host (snapshot.Taken).
	Unfiltered []string `json:"unfiltered,omitempty"`
}

// DiskOver says /src holds more than the sandbox's disk guard allows.
type DiskOver struct {
	Used  int64 `json:"used"`
	Limit int64 `json:"limit"`
}

// Notes are the lines a caller shows for b: the files withheld over
// max-file-size with the ways out (the first few), those past max-call-size
// together, the disk guard, and why the config's bounds were not used.
func (b Bounds) Notes() []string {
	const maxLines = 5
	var out []string
	later, bigMore := b.WithheldMore, 0
	var laterNames []string
	for _, w := range b.Withheld {
		if w.Limit == snapshot.LimitCall {
			later++
			if len(laterNames) < 3 {
				laterNames = append(laterNames, agenttext.Shown(agenttext.Elide(w.Path, 120)))
			}
			continue
		}
		if len(out) == maxLines {
			bigMore++
			continue
		}
		kept := "it stays in the sandbox"
		if w.Tracked {
			kept += " and the branch keeps its last committed version"
		}
		if w.InName {
			out = append(out, fmt.Sprintf("not committed: the path %s holds the value of secret %s (shown masked); it stays in the sandbox. Rename it and the next call commits it",
				agenttext.Shown(w.Path), w.Secret))
			continue
		}
		if w.Limit == snapshot.LimitPath {
			out = append(out, pathNote(w))
			continue
		}
		if w.Limit == snapshot.LimitSecret {
			out = append(out, fmt.Sprintf("not committed: %s holds the value of secret %s; %s. Take the value out of the file (read $%s instead) and the next call commits it",
				agenttext.Shown(w.Path), w.Secret, kept, w.Secret))
			continue
		}
		raise := "raise [snapshot] max-file-size"
		if b.MaxCall > 0 && w.Size > b.MaxCall {
			raise += " and max-call-size (at least as large)"
		}
		out = append(out, fmt.Sprintf("not committed: %s (%s) is over max-file-size (%s); %s. Add it to .gitignore, or %s in .litterbox.local.toml",
			agenttext.Shown(w.Path), HumanSize(w.Size), config.FormatSize(w.Max), kept, raise))
	}
	if bigMore > 0 {
		out = append(out, fmt.Sprintf("not committed: %d more file(s) over max-file-size", bigMore))
	}
	if later > 0 {
		if later > len(laterNames) {
			laterNames = append(laterNames, fmt.Sprintf("and %d more", later-len(laterNames)))
		}
		out = append(out, fmt.Sprintf("not committed yet: %d file(s) (%s) are past max-call-size (%s) or the names one call carries; the next call commits them",
			later, strings.Join(laterNames, ", "), config.FormatSize(b.MaxCall)))
	}
	if d := b.DiskOver; d != nil {
		out = append(out, fmt.Sprintf("/src and the home hold %s, over the limit of %s ([docker] disk): write, edit, patch and upload are refused until files are removed", HumanSize(d.Used), HumanSize(d.Limit)))
	}
	if len(b.Unfiltered) > 0 {
		out = append(out, unfilteredNote(b.Unfiltered))
	}
	if b.ConfigNote != "" && len(out) > 0 {
		out = append(out, b.ConfigNote)
	}
	return out
}

// unfilteredNote says which files were committed without their filter.
func unfilteredNote(paths []string) string {
	names := make([]string, 0, 3)
	for _, p := range paths[:min(len(paths), 3)] {
		names = append(names, agenttext.Shown(agenttext.Elide(p, 120)))
	}
	if len(paths) > len(names) {
		names = append(names, fmt.Sprintf("and %d more", len(paths)-len(names)))
	}
	return fmt.Sprintf("committed as written, no filter run: %s. The filter driver the sandbox's .gitattributes name for them is not one your own attributes give those paths, and only yours run on the host",
		strings.Join(names, ", "))
}

// pathNote says which path the host cannot store and how to get past it;
// a path that long is shown by its ends.
func pathNote(w snapshot.Withheld) string {
	return fmt.Sprintf("not committed: %s is a path of %d bytes, longer than the host can store (%d bytes here, %d a name); it stays in the sandbox. Delete or rename it in the sandbox (shorter names, fewer directories), or add it to .gitignore",
		agenttext.Shown(agenttext.Elide(w.Path, 120)), len(w.Path), w.Max, 255)
}

// HumanSize writes a byte count for people: "512 B", "50.0 MiB".
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
