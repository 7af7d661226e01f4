package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// receive reads the files the plan fetches, in order, and the End that
// follows them, then stores the files as blobs and returns their tree
// entries. A file that vanished meanwhile is dropped from the tree when it
// was tracked. The End is read before the files are hashed: the helper
// exits once it has sent it, and its exec must not wait for the host.
func (s *Store) receive(ctx context.Context, r *protocol.Reader, plan *planResult) ([]gitcli.Entry, *protocol.End, error) {
	if len(plan.fetch) == 0 {
		end, err := readEnd(r)
		return nil, end, err
	}
	if err := os.RemoveAll(s.Tmp); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(s.Tmp, 0o755); err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(s.Tmp)
	im, err := s.newImporter(ctx, plan)
	if err != nil {
		return nil, nil, err
	}
	defer im.abort()
	rc := &received{}
	defer s.dropMirrored(rc)
	for i, want := range plan.fetch {
		if err := s.receiveOne(ctx, r, plan, im, rc, i, want); err != nil {
			return nil, nil, err
		}
	}
	end, err := readEnd(r)
	if err != nil {
		return nil, nil, err
	}
	if err := im.close(); err != nil {
		return nil, nil, err
	}
	if err := s.hashReceived(ctx, plan, rc); err != nil {
		return nil, nil, err
	}
	return slices.Concat(rc.regular, rc.links, rc.odd, rc.imported), end, nil
}

// received are the files receive has taken so far, by how they are
// stored: regular files written under the rules mirror (written), links
// and files whose names hash-object cannot read by line (odd) as temp
// files, and files imported in memory, already stored.
type received struct {
	regular, links, odd, imported []gitcli.Entry
	written, linkFiles, oddFiles  []string
}

// dropMirrored removes the files written into the rules mirror and the
// directories made for them: the mirror keeps rule files only, or it grows
// with every directory the agent makes.
func (s *Store) dropMirrored(rc *received) {
	for _, p := range rc.written {
		if !isRuleFile(p) {
			os.Remove(filepath.Join(s.Rules, filepath.FromSlash(p)))
			removeEmptyDirs(s.Rules, p)
		}
	}
}

// receiveOne reads the i-th file of the plan, want, and takes it, drops
// it (gone since the scan) or withholds it (past a bound, holding a
// secret).
func (s *Store) receiveOne(ctx context.Context, r *protocol.Reader, plan *planResult, im *importer, rc *received, i int, want string) error {
	p, err := r.Expect(protocol.TFile)
	if err != nil {
		return err
	}
	h, err := protocol.DecodeFileHeader(p)
	if err != nil {
		return err
	}
	if h.Path != want {
		return fmt.Errorf("sandbox helper sent %q where %q was asked for", h.Path, want)
	}
	if h.Missing {
		if plan.tracked[want] {
			plan.remove = append(plan.remove, gitcli.Entry{Path: want})
		}
		return nil
	}
	e := gitcli.Entry{Path: want, Mode: gitMode(h.Mode)}
	switch h.Mode & protocol.ModeType {
	case protocol.ModeSymlink:
		return s.receiveLink(plan, rc, i, h, e)
	case protocol.ModeRegular:
		return s.receiveFile(ctx, r, plan, im, rc, i, h, e)
	}
	return fmt.Errorf("sandbox helper sent %q of unknown type %o", want, h.Mode)
}

// receiveLink takes a symlink's target, as a temp file to hash.
func (s *Store) receiveLink(plan *planResult, rc *received, i int, h *protocol.FileHeader, e gitcli.Entry) error {
	want := e.Path
	if len(h.Link) > maxLink {
		return fmt.Errorf("sandbox helper sent a symlink target of %d bytes for %q; Linux allows %d", len(h.Link), want, maxLink)
	}
	if over, max := s.overBound(plan, want, int64(len(h.Link))); over != "" {
		plan.withhold(want, int64(len(h.Link)), over, max)
		return nil
	}
	if name := s.Secrets.Holds([]byte(h.Link)); name != "" {
		plan.withholdSecret(want, int64(len(h.Link)), name)
		return nil
	}
	f := filepath.Join(s.Tmp, "l"+strconv.Itoa(i))
	if err := os.WriteFile(f, []byte(h.Link), 0o644); err != nil {
		return err
	}
	rc.links, rc.linkFiles = append(rc.links, e), append(rc.linkFiles, f)
	return nil
}

// receiveFile takes a regular file's content: in memory and stored at
// once when the importer takes it, else written (into the rules mirror,
// or as a temp file for a name hash-object cannot read by line) to hash
// after the End. Its content is looked at for secrets before anything
// keeps it.
func (s *Store) receiveFile(ctx context.Context, r *protocol.Reader, plan *planResult, im *importer, rc *received, i int, h *protocol.FileHeader, e gitcli.Entry) error {
	want := e.Path
	// The file may have grown since the scan, or the helper lied about
	// its size: what it sends is bounded all the same.
	size := int64(min(h.Size, 1<<62))
	if over, max := s.overBound(plan, want, size); over != "" {
		plan.withhold(want, size, over, max)
		if _, err := io.CopyN(io.Discard, r.Raw(int64(h.Size)), int64(h.Size)); err != nil {
			return fmt.Errorf("receiving %s: %w", want, err)
		}
		return nil
	}
	var content io.Reader = r.Raw(int64(h.Size))
	if im.take(want, size) {
		// Held in memory, looked at for secrets before anything stores it.
		buf := make([]byte, h.Size)
		if _, err := io.ReadFull(content, buf); err != nil {
			return fmt.Errorf("receiving %s: %w", want, err)
		}
		if name := s.Secrets.Holds(buf); name != "" {
			plan.withholdSecret(want, size, name)
			return nil
		}
		if im.plain(want, buf) {
			var err error
			if e.ID, err = im.store(ctx, s, buf); err != nil {
				return err
			}
			rc.imported = append(rc.imported, e)
			return nil
		}
		content = bytes.NewReader(buf)
	}
	// The content is looked at for secrets as it is written.
	scan := s.Secrets.NewScanner()
	content = io.TeeReader(content, scan)
	line := gitcli.LinePath(want)
	dst := filepath.Join(s.Tmp, "f"+strconv.Itoa(i))
	var err error
	if line {
		dst = filepath.Join(s.Rules, filepath.FromSlash(want))
		err = writeUnderFrom(s.Rules, want, content, int64(h.Size))
	} else {
		err = writeFrom(dst, content, int64(h.Size))
	}
	if err != nil {
		return err
	}
	if name := scan.Found(); name != "" {
		// Not even the mirror keeps it: it is on the host's disk.
		plan.withholdSecret(want, size, name)
		os.Remove(dst)
		if line {
			removeEmptyDirs(s.Rules, want)
		}
		return nil
	}
	if line {
		rc.written, rc.regular = append(rc.written, want), append(rc.regular, e)
	} else {
		rc.odd, rc.oddFiles = append(rc.odd, e), append(rc.oddFiles, dst)
	}
	return nil
}

// hashReceived stores the written files and the links as blobs, and gives
// each entry its id. A file whose filter driver only the sandbox's
// attributes name is stored as written (unfiltered).
func (s *Store) hashReceived(ctx context.Context, plan *planResult, rc *received) error {
	skip, err := s.unfiltered(ctx, plan, slices.Concat(rc.written, pathsOf(rc.odd)))
	if err != nil {
		return err
	}
	var filtered, asWritten []string
	var filteredAt, asWrittenAt []int
	for i, p := range rc.written {
		if skip[p] {
			asWritten, asWrittenAt = append(asWritten, s.mirrored(p)), append(asWrittenAt, i)
		} else {
			filtered, filteredAt = append(filtered, p), append(filteredAt, i)
		}
	}
	ids, err := s.Git.HashWorkTreeFiles(ctx, s.GitDir, s.Rules, filtered)
	if err != nil {
		return err
	}
	setIDsAt(rc.regular, filteredAt, ids)
	if ids, err = s.Git.HashObjects(ctx, append(asWritten, rc.linkFiles...)); err != nil {
		return err
	}
	setIDsAt(rc.regular, asWrittenAt, ids[:len(asWritten)])
	setIDs(rc.links, ids[len(asWritten):])
	for i := range rc.odd {
		id, err := s.hashOdd(ctx, rc.oddFiles[i], rc.odd[i].Path, skip[rc.odd[i].Path])
		if err != nil {
			return err
		}
		rc.odd[i].ID = id
	}
	for p := range skip {
		plan.unfiltered = append(plan.unfiltered, p)
	}
	slices.Sort(plan.unfiltered)
	return nil
}

// hashOdd stores a file whose name hash-object cannot read by line, from
// its temp file, as git would store it at p, or as written.
func (s *Store) hashOdd(ctx context.Context, file, p string, asWritten bool) (string, error) {
	if asWritten {
		ids, err := s.Git.HashObjects(ctx, []string{file})
		if err != nil {
			return "", err
		}
		return ids[0], nil
	}
	return s.Git.HashFileAs(ctx, s.GitDir, s.Rules, file, p)
}

func readEnd(r *protocol.Reader) (*protocol.End, error) {
	p, err := r.Expect(protocol.TEnd)
	if err != nil {
		return nil, err
	}
	return protocol.DecodeEnd(p)
}

// maxLink is the longest symlink target Linux stores (PATH_MAX less the NUL).
const maxLink = 4095

// overBound names the bound a file of size would pass. The plan charged
// the call's budget with the size the scan reported; the size that comes
// is charged instead, unless the file is withheld.
func (s *Store) overBound(plan *planResult, p string, size int64) (string, int64) {
	plan.budget += cost(plan.size[p])
	switch {
	case s.MaxFile > 0 && size > s.MaxFile:
		return LimitFile, s.MaxFile
	case cost(size) > plan.budget:
		return LimitCall, s.MaxCall
	}
	plan.budget -= cost(size)
	return "", 0
}

func setIDsAt(entries []gitcli.Entry, at []int, ids []string) {
	for k, i := range at {
		entries[i].ID = ids[k]
	}
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
