package create

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/tarstream"
)

// Submodule is what create did with one submodule of the base commit.
type Submodule struct {
	Path   string `json:"path"`
	Commit string `json:"commit"`
	// Copied: its content at Commit is in the sandbox, from the host's
	// checkout of it. Otherwise its directory is empty.
	Copied bool   `json:"copied"`
	Note   string `json:"note"`
}

func submodulePaths(subs []Submodule) []string {
	out := make([]string, len(subs))
	for i, s := range subs {
		out[i] = s.Path
	}
	return out
}

// String is one line for create's output.
func (s Submodule) String() string {
	return fmt.Sprintf("submodule %s (%s): %s", s.Path, hostrepo.ShortID(s.Commit), s.Note)
}

// copySubmodules puts each submodule's tree at its recorded commit into the
// sandbox where the host has that commit checked out or fetched; git archive
// of the superproject leaves them empty. Changes inside a submodule are never
// committed (the helper does not scan them): the note says so.
func (m *Creator) copySubmodules(ctx context.Context, n hostrepo.Names, base string, uid, gid int) ([]Submodule, error) {
	links, err := m.Repo.Git.Gitlinks(ctx, base)
	if err != nil {
		return nil, &hostrepo.StepError{Step: "listing submodules", Err: err}
	}
	var out []Submodule
	for _, p := range slices.Sorted(maps.Keys(links)) {
		s := Submodule{Path: p, Commit: links[p]}
		sub := gitcli.New(filepath.Join(m.Repo.Root, filepath.FromSlash(p)), m.Repo.Git.Runner)
		paths, rerr := sub.Repo(ctx)
		has := false
		if rerr == nil && paths.Root == filepath.Join(m.Repo.Root, filepath.FromSlash(p)) {
			sub.Dir = paths.Root
			id, _ := sub.RevParse(ctx, s.Commit+"^{commit}")
			has = id != ""
		}
		if !has {
			s.Note = "not checked out on the host (git submodule update --init); left empty"
			out = append(out, s)
			continue
		}
		src := archiveSource{g: sub, gitDir: paths.CommonDir, dir: filepath.Join(m.Repo.Layout().TmpOf(n.Slug), "archive-"+strconv.Itoa(len(out)))}
		if err := m.copyArchive(ctx, src, s.Commit, m.intoBox(n, hostrepo.Workdir+"/"+p), uid, gid, nil); err != nil {
			return nil, err
		}
		s.Copied = true
		s.Note = "copied; changes inside it are not committed"
		out = append(out, s)
	}
	return out, nil
}

// archiveSource is where copyArchive reads a tree: a repository (its
// client), and where the copy makes and then removes the git dir that
// writes its checkout (gitcli.ArchiveDir), under the sandbox's own temp
// dir; yours when the user's work tree gives the attributes
// (gitcli.CheckoutTar).
type archiveSource struct {
	g      *gitcli.Client
	gitDir string // the repository's common git dir
	dir    string
	yours  bool
}

// copyArchive streams the checkout of commit in src's repository through
// Chown into into (`docker cp -` at a directory), so the sandbox user owns
// it and no archive is held in memory or on disk.
func (m *Creator) copyArchive(ctx context.Context, src archiveSource, commit string, into destination, uid, gid int, visit func(string, []byte) error) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Each stage records its failure before closing its pipes, so the first
	// error recorded is the cause and the others are its consequences.
	var first firstError
	archR, archW := io.Pipe()
	ownR, ownW := io.Pipe()
	done := make(chan struct{}, 2)
	go func() {
		err := gitcli.ArchiveDir(src.gitDir, src.dir)
		if err == nil {
			err = src.g.CheckoutTar(ctx, src.dir, commit, src.yours, archW)
		}
		if rmErr := os.RemoveAll(src.dir); err == nil {
			err = rmErr
		}
		first.set(err, "git archive "+hostrepo.ShortID(commit))
		archW.CloseWithError(err)
		done <- struct{}{}
	}()
	go func() {
		err := tarstream.Chown(ownW, archR, uid, gid, visit)
		first.set(err, "rewriting archive owners")
		archR.CloseWithError(tarstream.OrStopped(err))
		ownW.CloseWithError(err)
		done <- struct{}{}
	}()
	err := into.copy(ctx, ownR)
	first.set(err, "copying the tree into "+into.dir)
	ownR.CloseWithError(tarstream.ErrStopped)
	if err != nil {
		cancel()
	}
	<-done
	<-done
	if parent.Err() != nil {
		return &hostrepo.StepError{Step: "copying the tree into " + into.dir, Err: parent.Err()}
	}
	if first.err != nil {
		return &hostrepo.StepError{Step: first.step, Err: first.err}
	}
	return nil
}

// destination is where copyArchive extracts a tree: dir, by copy.
type destination struct {
	dir  string
	copy func(ctx context.Context, r io.Reader) error
}

// intoBox is dir of sandbox n, by copyIn.
func (m *Creator) intoBox(n hostrepo.Names, dir string) destination {
	return destination{dir, func(ctx context.Context, r io.Reader) error { return m.copyIn(ctx, n, dir, r) }}
}

// copyIn extracts the tar stream r into dir of sandbox n: with the
// engine's copy, or under gVisor through the helper inside, where the
// sandbox's kernel sees the files arrive (Podman's cp cannot reach a
// gVisor container's volumes at all).
func (m *Creator) copyIn(ctx context.Context, n hostrepo.Names, dir string, r io.Reader) error {
	if rec, _ := m.Repo.Store().Load(n.Slug); rec == nil || rec.Isolation != config.IsolationGVisor {
		return m.Repo.BoxOf(n).CopyIn(ctx, dir, r)
	}
	_, err := execChecked(ctx, m.Repo.BoxOf(n), box.ExecSpec{Interactive: true, Cmd: m.Agent.Helper.Argv(protocol.CmdUntar{Dir: dir})}, box.Streams{Stdin: r})
	return err
}
