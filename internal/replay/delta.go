package replay

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// Delta writes to w, as a tar the sandbox's helper applies (OpSync), what
// turns the tree of from into the tree of to: a removal (an entry of type
// protocol.SyncRemove) for each file or link to has no more, then each
// file and link to holds anew or otherwise, with its content and mode.
// Submodules are left alone, as the snapshot leaves them. It returns the
// paths it changes.
func Delta(ctx context.Context, g *gitcli.Client, from, to string, w io.Writer) ([]string, error) {
	out, err := g.Output(ctx, "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", from, to)
	if err != nil {
		return nil, err
	}
	var removed, paths []string
	var writes []gitcli.Entry
	f := strings.Split(out, "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		// ":oldmode newmode oldid newid status", then the path.
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) != 5 {
			return nil, fmt.Errorf("git diff-tree gave %q", f[i])
		}
		p := f[i+1]
		switch {
		case meta[4] == "D" && meta[0] != "160000":
			removed = append(removed, p)
		case meta[4] != "D" && meta[1] != "160000":
			writes = append(writes, gitcli.Entry{Mode: meta[1], ID: meta[3], Path: p})
		default:
			continue
		}
		paths = append(paths, p)
	}
	tw := tar.NewWriter(w)
	for _, p := range removed {
		h := &tar.Header{Name: p, Typeflag: protocol.SyncRemove, Mode: 0o644}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
	}
	ids := make([]string, len(writes))
	for i, e := range writes {
		ids[i] = e.ID
	}
	i := 0
	err = g.ReadBlobs(ctx, ids, true, func(id, typ string, size int64, r io.Reader) error {
		e := writes[i]
		i++
		if typ != "blob" {
			return fmt.Errorf("%s of %s is a %s, not a blob", id, e.Path, typ)
		}
		return writeEntry(tw, e, size, r)
	})
	if err != nil {
		return nil, err
	}
	return paths, tw.Close()
}

// writeEntry adds the file or link e, of size bytes from r, to tw.
func writeEntry(tw *tar.Writer, e gitcli.Entry, size int64, r io.Reader) error {
	h := &tar.Header{Name: e.Path, Typeflag: tar.TypeReg, Mode: 0o644, Size: size}
	switch e.Mode {
	case "100755":
		h.Mode = 0o755
	case "120000":
		target, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		h.Typeflag, h.Linkname, h.Size, h.Mode = tar.TypeSymlink, string(target), 0, 0o777
		return tw.WriteHeader(h)
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	_, err := io.Copy(tw, r)
	return err
}
