package snapshot

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"slices"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/secrets"
)

// minReuse is how many files to fetch, with content ids, make it worth
// reading the whole tree to look for them there: a call changing a few
// files pays nothing for reuse.
const minReuse = 8

// reuse takes out of the plan's fetch the files whose content the
// sandbox's branch already holds at some path, a moved or copied file (a
// renamed directory's thousands of them), and commits them with that blob
// instead: nothing crosses again, nothing is hashed again. The helper's
// content id is untrusted, so a file is reused only when
//   - the id names a blob of this sandbox's own branch's tree,
//     not any object of the repository: a lying helper gets at most a file
//     it could have made by copying one it has;
//   - the blob is what `git add` would store at the new path (asIs): no
//     filter, ident or working-tree-encoding attribute applies there, and
//     it has no CR for an end-of-line conversion to change;
//   - it passes what a fetched file must: within max-file-size (its real
//     size, not the one reported), no secret's value in it.
//
// A file that is not reused is fetched as before. The call's budget was
// charged as for a fetch (bound), so a call takes the same files either way.
func (s *Store) reuse(ctx context.Context, p *planResult, tip string, staged map[string]gitcli.Entry) error {
	cands := p.reusable()
	if len(cands) < minReuse {
		return nil
	}
	if staged == nil {
		var err error
		if staged, err = s.Git.TreeAll(ctx, tip); err != nil {
			return err
		}
	}
	inTree := map[string]bool{}
	for _, e := range staged {
		if e.Mode != "160000" {
			inTree[e.ID] = true
		}
	}
	ids := map[string]string{} // path -> id
	asked := map[string]bool{}
	var paths, want []string
	for _, q := range cands {
		cid := p.changed[q].ID
		id := hex.EncodeToString(cid[:])
		if !inTree[id] {
			continue
		}
		if !asked[id] {
			asked[id] = true
			want = append(want, id)
		}
		ids[q] = id
		paths = append(paths, q)
	}
	if len(paths) == 0 {
		return nil
	}
	rules, err := s.asIsFor(ctx, p)
	if err != nil {
		return err
	}
	eol := slices.ContainsFunc(paths, rules.eol)
	fit, err := s.plainBlobs(ctx, want, eol)
	if err != nil {
		return err
	}
	take := map[string]bool{}
	for _, q := range paths {
		c := p.changed[q]
		size, ok := fit[ids[q]]
		switch t := c.Mode & protocol.ModeType; {
		case !ok,
			t == protocol.ModeRegular && !rules.bytesAsIs(q),
			t == protocol.ModeSymlink && size > maxLink: // as receive bounds a link
			continue
		}
		p.reused = append(p.reused, gitcli.Entry{Path: q, Mode: gitMode(c.Mode), ID: ids[q]})
		take[q] = true
	}
	p.fetch = slices.DeleteFunc(p.fetch, func(q string) bool { return take[q] })
	return nil
}

// reusable are the files to fetch that the helper gave a content id:
// regular files and symlinks, rule files aside (the mirror takes those
// from the scan, written).
func (p *planResult) reusable() []string {
	var out []string
	for _, q := range p.fetch {
		c, ok := p.changed[q]
		t := c.Mode & protocol.ModeType
		if ok && c.ID != ([20]byte{}) && (t == protocol.ModeRegular || t == protocol.ModeSymlink) && !isRuleFile(q) {
			out = append(out, q)
		}
	}
	return out
}

// plainBlobs reads the blobs ids name and gives the size of those that may
// be reused: a blob within max-file-size, with no secret's value and, when
// eol is set, no CR. The content is read only when one of those asks for
// it; otherwise the sizes do.
func (s *Store) plainBlobs(ctx context.Context, ids []string, eol bool) (map[string]int64, error) {
	read := eol || s.Secrets.Any()
	fit := map[string]int64{}
	err := s.Git.ReadBlobs(ctx, ids, read, func(id, typ string, size int64, content io.Reader) error {
		if typ != "blob" || s.MaxFile > 0 && size > s.MaxFile {
			return nil
		}
		if read {
			if ok, err := plainBlob(content, s.Secrets, eol); !ok || err != nil {
				return err
			}
		}
		fit[id] = size
		return nil
	})
	return fit, err
}

// plainBlob reads a blob's content: false when it holds a secret's value
// or, with eol, a CR (end-of-line conversion could change it at another
// path).
func plainBlob(r io.Reader, sec *secrets.Values, eol bool) (bool, error) {
	scan := sec.NewScanner()
	buf := make([]byte, 32<<10)
	cr := false
	for {
		n, err := r.Read(buf)
		cr = cr || eol && bytes.IndexByte(buf[:n], '\r') >= 0
		scan.Write(buf[:n])
		if err == io.EOF {
			return !cr && scan.Found() == "", nil
		}
		if err != nil {
			return false, err
		}
	}
}
