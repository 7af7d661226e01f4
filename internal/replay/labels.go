package replay

import (
	"bytes"
	"context"
	"io"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
)

// git merge-tree labels each side of a conflict with the revision it was
// given: here the ids of a scratch commit and of the sandbox's tip, which
// tell the agent nothing about which side is whose. relabel writes the
// conflicted files again with the names instead: the branch the sandbox
// moved onto, the sandbox's branch, and "base" for the common ancestor
// that merge.conflictStyle=diff3 shows.

// markers are the conflict marker lines' starts, by side.
var markers = [...]string{"<<<<<<< ", "||||||| ", ">>>>>>> "}

// relabel returns tree with the marker lines of the conflicted files that
// name a revision of labels (old label to new, by side: ours, base,
// theirs) naming the new one.
func relabel(ctx context.Context, g *gitcli.Client, tree string, conflicts []string, labels [3][2]string) (string, error) {
	entries, err := g.TreeEntries(ctx, tree, conflicts)
	if err != nil {
		return "", err
	}
	var files []gitcli.Entry
	var ids []string
	for _, p := range conflicts {
		if e, ok := entries[p]; ok && (e.Mode == "100644" || e.Mode == "100755") {
			files, ids = append(files, e), append(ids, e.ID)
		}
	}
	var changes []gitcli.Entry
	i := 0
	err = g.ReadBlobs(ctx, ids, true, func(_, _ string, _ int64, r io.Reader) error {
		e := files[i]
		i++
		body, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		out, changed := relabelText(body, labels)
		if !changed {
			return nil
		}
		id, err := g.WriteBlob(ctx, out)
		if err != nil {
			return err
		}
		e.ID = id
		changes = append(changes, e)
		return nil
	})
	if err != nil || len(changes) == 0 {
		return tree, err
	}
	return g.TreeWith(ctx, tree, changes)
}

// relabelText renames the labels of body's marker lines: a line that is a
// marker, then the old label (the base's may be its id abbreviated, as
// git shows a commit it labels itself), then nothing or ":path".
func relabelText(body []byte, labels [3][2]string) ([]byte, bool) {
	lines := bytes.SplitAfter(body, []byte("\n"))
	changed := false
	for i, line := range lines {
		for side, m := range markers {
			old, now := labels[side][0], labels[side][1]
			rest, ok := bytes.CutPrefix(line, []byte(m))
			if !ok || old == "" || now == "" {
				continue
			}
			end := bytes.IndexAny(rest, ":\r\n")
			if end < 0 {
				end = len(rest)
			}
			label := string(rest[:end])
			if label != old && (side != 1 || len(label) < 4 || !strings.HasPrefix(old, label)) {
				continue
			}
			lines[i] = append([]byte(m+now), rest[end:]...)
			changed = true
		}
	}
	return bytes.Join(lines, nil), changed
}
