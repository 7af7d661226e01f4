package milestone

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/result"
)

// Diff flags that make git's output the same on every machine: no colour,
// no external diff or textconv driver a repository may configure.
var plainDiff = []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "-M"}

// DiffSince returns the changes of sandbox name's branch since its base
// (since "base" or "") or its last milestone ("milestone"; the base when
// it has none). It reads only the host repository.
func DiffSince(ctx context.Context, r *hostrepo.Repo, name, since string) (*result.Diff, error) {
	slug, base, tip, err := r.BaseAndTip(ctx, name)
	if err != nil {
		return nil, err
	}
	d := &result.Diff{Since: "base", From: base, To: tip, Files: []result.DiffFile{}}
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
func parseNumstat(s string) []result.DiffFile {
	files := []result.DiffFile{}
	f := strings.Split(s, "\x00")
	for i := 0; i < len(f); i++ {
		parts := strings.SplitN(f[i], "\t", 3)
		if len(parts) != 3 {
			continue
		}
		df := result.DiffFile{Path: parts[2], Binary: parts[0] == "-"}
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
