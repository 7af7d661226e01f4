package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/tarstream"
)

// Upload copies a host file or directory into the sandbox at dest (the exact
// path it gets; relative to /src), modes kept, and commits it like write.
func (m *Agent) Upload(ctx context.Context, name, src, dest string) (*result.Act, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, err
	}
	abs, err := writablePath(dest)
	if err != nil {
		return nil, err
	}
	if _, err := os.Lstat(src); err != nil {
		return nil, fmt.Errorf("upload source: %w", err)
	}
	tmp, err := os.CreateTemp(hostrepo.EnsureDir(m.Repo.Layout().Tmp()), "upload-*.tar")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	uid, gid, err := m.Repo.SandboxIDs(slug)
	if err != nil {
		return nil, err
	}
	if err := tarstream.TarPath(tmp, src, path.Base(abs), uid, gid); err != nil {
		return nil, fmt.Errorf("reading %s: %w", src, err)
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	res, err := m.act(ctx, slug, Action{Op: protocol.OpUpload, Arg: abs, Content: tmp, Size: size, Message: hostrepo.CommitMessage("upload", Display(abs))})
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("upload to %s: %s", Display(abs), agenttext.FirstLine(res.Stderr))
	}
	return res, nil
}

// Download copies a file or directory out of the sandbox (src relative to
// /src) to the host path dest (the exact path it gets), modes kept. Nothing is
// ever written outside dest.
func (m *Agent) Download(ctx context.Context, name, src, dest string) (int, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return 0, err
	}
	abs := ResolvePath(src)
	if abs == "/" {
		return 0, errors.New("download of / is not supported; name a directory")
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := m.helperTool(ctx, slug, pw, protocol.CmdTar{Path: abs})
		pw.CloseWithError(errOrEOF(err))
		done <- err
	}()
	n, extractErr := tarstream.ExtractTar(pr, path.Base(abs), dest)
	pr.CloseWithError(errors.New("extraction ended"))
	err = <-done
	// The sandbox refusing (no such container, no such file) is the cause;
	// else a refused archive is, and the exec failing on the closed pipe
	// follows.
	if err != nil && (extractErr == nil || errors.Is(err, ErrNoSuchFile)) {
		return n, err
	}
	return n, extractErr
}
