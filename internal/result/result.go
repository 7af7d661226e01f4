// Package result holds what the agent tools answer: the results the agent
// layer and milestones return, which MCP and the CLI render. It holds data
// and the notes a result carries, nothing that acts.
package result

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// Act is what an agent action did.
type Act struct {
	ExitCode int    `json:"exit_code"`
	TimedOut bool   `json:"timed_out"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// StdoutCut and StderrCut count the bytes elided between the head and
	// the tail of a stream longer than the output limit, StdoutLog and
	// StderrLog the file in the sandbox that holds such a stream whole.
	StdoutCut int64  `json:"stdout_cut,omitempty"`
	StderrCut int64  `json:"stderr_cut,omitempty"`
	StdoutLog string `json:"stdout_log,omitempty"`
	StderrLog string `json:"stderr_log,omitempty"`
	// Cancelled: the caller gave up (Ctrl-C, an MCP cancel); every process
	// of the command was killed and what it had changed was committed.
	Cancelled bool `json:"cancelled,omitempty"`
	// Snapshot is the commit made for the call's changes, "" when nothing
	// git would track changed.
	Snapshot string `json:"snapshot"`
	Between
	Bounds
	// NoShell: the image has no /bin/sh, so no command ran.
	NoShell bool `json:"-"`
	// Replaced counts the replacements an edit made.
	Replaced int `json:"-"`
	// DirsRead and FullScan say how the scan went (tests, benchmarks).
	DirsRead int  `json:"-"`
	FullScan bool `json:"-"`
	// OpErr is the helper's failure of the action itself (a write, a
	// sync), also in Stderr.
	OpErr string `json:"-"`
}

// Truncated reports whether output was cut.
func (r *Act) Truncated() bool { return r.StdoutCut > 0 || r.StderrCut > 0 }

// Between is the snapshot a call made, before its own, of what changed in
// the sandbox since the last call: "" when nothing did.
type Between struct {
	Commit string `json:"between,omitempty"`
	Paths  int    `json:"between_paths,omitempty"`
}

// Edit says what an edit did.
type Edit struct {
	Replacements int    `json:"replacements"`
	Edits        int    `json:"edits"`
	Snapshot     string `json:"snapshot"`
	Between
	Bounds
}

// Patch says what a patch did.
type Patch struct {
	Snapshot string `json:"snapshot"`
	Created  bool   `json:"created,omitempty"`
	Deleted  bool   `json:"deleted,omitempty"`
	Between
	Bounds
}

// Read is a slice of a file's lines, or an image.
type Read struct {
	// Content is the lines, without numbers; FirstLine is the 1-based
	// number of the first (Offset+1).
	Content    string `json:"content"`
	Offset     int    `json:"offset"`
	FirstLine  int    `json:"first_line"`
	Lines      int    `json:"lines"`
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated"`
	// CapHit: the lines stopped at agent.MaxReadBytes, not at the limit.
	CapHit bool `json:"cap_hit,omitempty"`
	// Image is a PNG, JPEG, GIF or WebP file, whole, instead of lines.
	Image *Image `json:"image,omitempty"`
}

// Image is an image file read whole.
type Image struct {
	MIME string `json:"mime"`
	Size int64  `json:"size"`
	Data []byte `json:"-"`
}

// Entry is one file system entry listed by ls.
type Entry = protocol.LsEntry

// Match is one line grep found.
type Match = protocol.Match

// Run is how a session ended and what it committed.
type Run struct {
	ExitCode int
	Commits  []string
}

// Milestone says what a milestone squashed.
type Milestone struct {
	Commit   string `json:"commit"`
	Squashed int    `json:"squashed"`
}

// DiffFile is one file an agent's diff changes, as git diff --numstat
// counts it (Binary: no line counts).
type DiffFile struct {
	Path    string `json:"path"`
	From    string `json:"from,omitempty"` // a rename's old path
	Added   int    `json:"added"`
	Deleted int    `json:"deleted"`
	Binary  bool   `json:"binary,omitempty"`
}

// Diff is what a sandbox's branch changed since its base or its last
// milestone: per file counts and the unified diff, cut at milestone.OutputCap.
type Diff struct {
	Since string     `json:"since"` // "base" or "milestone"
	From  string     `json:"from"`
	To    string     `json:"to"`
	Files []DiffFile `json:"files"`
	Diff  string     `json:"diff"`
	// Cut counts the diff's bytes beyond milestone.OutputCap, not shown.
	Cut int64 `json:"cut,omitempty"`
}

// Stat renders the files as git diff --stat does, roughly: one line each
// and a summary.
func (d *Diff) Stat() string {
	names := make([]string, len(d.Files))
	width := 0
	for i, f := range d.Files {
		names[i] = f.Path
		if f.From != "" {
			names[i] = f.From + " => " + f.Path
		}
		width = max(width, min(utf8.RuneCountInString(names[i]), maxStatName))
	}
	var b strings.Builder
	added, deleted := 0, 0
	for i, f := range d.Files {
		// Names line up (git diff --stat's way), up to a width past which
		// one long path would push every other line out with it.
		name := names[i] + strings.Repeat(" ", max(0, width-utf8.RuneCountInString(names[i])))
		if f.Binary {
			fmt.Fprintf(&b, " %s | binary\n", name)
			continue
		}
		fmt.Fprintf(&b, " %s | +%d -%d\n", name, f.Added, f.Deleted)
		added, deleted = added+f.Added, deleted+f.Deleted
	}
	fmt.Fprintf(&b, " %d file(s) changed, %d insertion(s)(+), %d deletion(s)(-)\n", len(d.Files), added, deleted)
	return b.String()
}

// maxStatName is the widest a name pads the others to in Stat.
const maxStatName = 60
