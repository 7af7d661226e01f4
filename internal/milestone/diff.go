package milestone

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

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
// milestone: per file counts and the unified diff, cut at OutputCap.
type Diff struct {
	Since string     `json:"since"` // "base" or "milestone"
	From  string     `json:"from"`
	To    string     `json:"to"`
	Files []DiffFile `json:"files"`
	Diff  string     `json:"diff"`
	// Cut counts the diff's bytes beyond OutputCap, not shown.
	Cut int64 `json:"cut,omitempty"`
}

// Diff flags that make git's output the same on every machine: no colour,
// no external diff or textconv driver a repository may configure.
var plainDiff = []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M"}

// DiffSince returns the changes of sandbox name's branch since its base
// (since "base" or "") or its last milestone ("milestone"; the base when
// it has none). It reads only the host repository.
func DiffSince(ctx context.Context, r *hostrepo.Repo, name, since string) (*Diff, error) {
	slug, base, tip, err := r.BaseAndTip(ctx, name)
	if err != nil {
		return nil, err
	}
	d := &Diff{Since: "base", From: base, To: tip, Files: []DiffFile{}}
	switch since {
	case "", "base":
	case "milestone":
		ms, err := r.Git.RevParse(ctx, milestoneRef(slug))
		if err != nil {
			return nil, err
		}
		if ms != "" {
			d.Since, d.From = "milestone", ms
		}
	default:
		return nil, fmt.Errorf("since %q: use \"base\" or \"milestone\"", since)
	}
	numstat, err := r.Git.Output(ctx, slices.Concat(plainDiff, []string{"--numstat", "-z", d.From, d.To})...)
	if err != nil {
		return nil, err
	}
	d.Files = parseNumstat(numstat)
	var out headBuf
	if err := r.Git.Stream(ctx, nil, &out, nil, slices.Concat(plainDiff, []string{d.From, d.To})...); err != nil {
		return nil, err
	}
	d.Diff, d.Cut = out.String(), out.cut
	return d, nil
}

// parseNumstat reads git diff --numstat -z: "added\tdeleted\tpath\0", or
// for a rename "added\tdeleted\t\0from\0to\0"; "-" counts mean binary.
func parseNumstat(s string) []DiffFile {
	files := []DiffFile{}
	f := strings.Split(s, "\x00")
	for i := 0; i < len(f); i++ {
		parts := strings.SplitN(f[i], "\t", 3)
		if len(parts) != 3 {
			continue
		}
		df := DiffFile{Path: parts[2], Binary: parts[0] == "-"}
		df.Added, _ = strconv.Atoi(parts[0])
		df.Deleted, _ = strconv.Atoi(parts[1])
		if df.Path == "" && i+2 < len(f) {
			df.From, df.Path = f[i+1], f[i+2]
			i += 2
		}
		files = append(files, df)
	}
	return files
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

// headBuf keeps the first OutputCap bytes written to it and counts the rest.
type headBuf struct {
	strings.Builder
	cut int64
}

func (c *headBuf) Write(p []byte) (int, error) {
	n := min(len(p), max(hostrepo.OutputCap-c.Len(), 0))
	c.Builder.Write(p[:n])
	c.cut += int64(len(p) - n)
	return len(p), nil
}
