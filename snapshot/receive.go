package snapshot

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/helper/protocol"
)

// receive reads the files the plan fetches, in order, stores them as blobs
// and returns their index entries. A file that vanished meanwhile is
// dropped from the index when it was tracked.
func (s *Store) receive(ctx context.Context, r *protocol.Reader, plan *planResult) ([]gitcli.Entry, error) {
	if len(plan.fetch) == 0 {
		return nil, nil
	}
	if err := os.RemoveAll(s.Tmp); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Tmp, 0o755); err != nil {
		return nil, err
	}
	defer os.RemoveAll(s.Tmp)
	var regular, links, odd []gitcli.Entry // odd: names hash-object cannot read by line
	var written []string
	defer func() {
		for _, p := range written {
			if !isRuleFile(p) {
				os.Remove(filepath.Join(s.Rules, filepath.FromSlash(p)))
			}
		}
	}()
	var oddFiles, linkFiles []string
	for i, want := range plan.fetch {
		p, err := r.Expect(protocol.TFile)
		if err != nil {
			return nil, err
		}
		h, err := protocol.DecodeFileHeader(p)
		if err != nil {
			return nil, err
		}
		if h.Path != want {
			return nil, fmt.Errorf("sandbox helper sent %q where %q was asked for", h.Path, want)
		}
		if h.Missing {
			plan.remove = append(plan.remove, gitcli.Entry{Path: want})
			continue
		}
		e := gitcli.Entry{Path: want, Mode: gitMode(h.Mode)}
		switch h.Mode & protocol.ModeType {
		case protocol.ModeSymlink:
			f := filepath.Join(s.Tmp, "l"+strconv.Itoa(i))
			if err := os.WriteFile(f, []byte(h.Link), 0o644); err != nil {
				return nil, err
			}
			links, linkFiles = append(links, e), append(linkFiles, f)
		case protocol.ModeRegular:
			if !gitcli.LinePath(want) {
				f := filepath.Join(s.Tmp, "f"+strconv.Itoa(i))
				if err := writeFrom(f, r.Raw(int64(h.Size)), int64(h.Size)); err != nil {
					return nil, err
				}
				odd, oddFiles = append(odd, e), append(oddFiles, f)
				continue
			}
			if err := writeUnderFrom(s.Rules, want, r.Raw(int64(h.Size)), int64(h.Size)); err != nil {
				return nil, err
			}
			written = append(written, want)
			regular = append(regular, e)
		default:
			return nil, fmt.Errorf("sandbox helper sent %q of unknown type %o", want, h.Mode)
		}
	}
	ids, err := s.Git.HashWorkTreeFiles(ctx, s.GitDir, s.Rules, written)
	if err != nil {
		return nil, err
	}
	setIDs(regular, ids)
	if ids, err = s.Git.HashObjects(ctx, linkFiles); err != nil {
		return nil, err
	}
	setIDs(links, ids)
	for i := range odd {
		id, err := s.Git.HashFileAs(ctx, s.GitDir, s.Rules, oddFiles[i], odd[i].Path)
		if err != nil {
			return nil, err
		}
		odd[i].ID = id
	}
	return slices.Concat(regular, links, odd), nil
}

func setIDs(entries []gitcli.Entry, ids []string) {
	for i := range entries {
		entries[i].ID = ids[i]
	}
}

// writeUnder writes data at the relative path p under root, replacing
// whatever stands in the way: the mirror is ours, and a path in it that
// conflicts is stale.
func writeUnder(root, p string, data []byte) error {
	return writeUnderFrom(root, p, strings.NewReader(string(data)), int64(len(data)))
}

func writeUnderFrom(root, p string, r io.Reader, n int64) error {
	dst := filepath.Join(root, filepath.FromSlash(p))
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		// A file where a directory must be: clear the way down from root.
		cur := root
		for _, c := range strings.Split(parent(p), "/") {
			cur = filepath.Join(cur, c)
			if fi, err := os.Lstat(cur); err == nil && !fi.IsDir() {
				os.Remove(cur)
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	if fi, err := os.Lstat(dst); err == nil && fi.IsDir() {
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
	}
	return writeFrom(dst, r, n)
}

// writeFrom writes exactly n bytes from r to a new file name.
func writeFrom(name string, r io.Reader, n int64) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.CopyN(f, r, n); err != nil {
		f.Close()
		return fmt.Errorf("receiving %s: %w", filepath.Base(name), err)
	}
	return f.Close()
}

func ensureDir(d string) string {
	_ = os.MkdirAll(d, 0o755)
	return d
}
