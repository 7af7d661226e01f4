package snapshot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// minImport is how many files a call fetches before plain ones are stored
// through fast-import (importer) rather than written out for hash-object:
// below it, the one hash-object process is the cheaper.
const minImport = 64

// maxImported is the largest file held in memory on its way to
// fast-import; a larger one is written out as before.
const maxImported = 1 << 20

// importer stores plain files' content as blobs through one git
// fast-import, fed as the files arrive. A file is plain where `git add`
// stores its bytes as they are (asIs): no filter, ident or
// working-tree-encoding attribute, and no CR where end-of-line conversion
// may apply. Its id is computed here, as git would.
type importer struct {
	rules *asIs
	pw    *io.PipeWriter
	w     *bufio.Writer
	done  chan error
}

// newImporter readies an importer for the plan's files to fetch, or
// returns nil when the call fetches too few for one.
func (s *Store) newImporter(ctx context.Context, plan *planResult) (*importer, error) {
	if len(plan.fetch) < minImport {
		return nil, nil
	}
	rules, err := s.asIsFor(ctx, plan)
	if err != nil {
		return nil, err
	}
	return &importer{rules: rules}, nil
}

// take reports whether the file p of size bytes goes through the
// importer: then its content is read into memory first (the secret scan
// sees it before anything stores it), and store decides.
func (im *importer) take(p string, size int64) bool {
	return im != nil && im.rules.bytesAsIs(p) && size <= maxImported
}

// plain reports whether content is stored at p as it is.
func (im *importer) plain(p string, content []byte) bool {
	return !im.rules.eol(p) || bytes.IndexByte(content, '\r') < 0
}

// store sends content to fast-import, starting it on the first, and
// returns the blob's id.
func (im *importer) store(ctx context.Context, s *Store, content []byte) (string, error) {
	if im.w == nil {
		pr, pw := io.Pipe()
		im.pw, im.w, im.done = pw, bufio.NewWriterSize(pw, 256<<10), make(chan error, 1)
		go func() {
			err := s.Git.ImportBlobs(ctx, pr)
			// A git that ended reads no more: the sender must not wait
			// (nil: io.ErrClosedPipe).
			pr.CloseWithError(err)
			im.done <- err
		}()
	}
	fmt.Fprintf(im.w, "blob\ndata %d\n", len(content))
	im.w.Write(content)
	if err := im.w.WriteByte('\n'); err != nil {
		return "", err
	}
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// close waits until what was sent is stored.
func (im *importer) close() error {
	if im == nil || im.w == nil {
		return nil
	}
	err := im.w.Flush()
	im.pw.Close()
	gerr := <-im.done
	im.w = nil
	return errors.Join(gerr, err)
}

// abort ends a fast-import that close did not, at the end of the last
// whole blob sent (a stream cut inside one would leave a crash report in
// the git dir): the blobs it stored are unreferenced, for gc to prune.
func (im *importer) abort() { _ = im.close() }
