package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/layout"
)

// LabelRepoID carries the repository's id (see repoIdentity) on every
// container and volume made since names became unique per repository; its
// absence marks a resource of an older release.
const LabelRepoID = "dev.litterbox.repo-id"

// identityFile holds a repository's id, in its common git dir so that every
// worktree reads the same one, and no clone inherits it.
type identityFile struct {
	ID string `json:"id"`
	// CommonDir is where the file was written: a file found elsewhere was
	// moved (keep the id) or copied with its repository (make a new one).
	CommonDir string `json:"common_dir"`
}

var idRE = regexp.MustCompile(`^[0-9a-f]{8}$`)

// DamagedIDError is a repository id file that cannot be read. Litterbox
// stops there: with no id, it would take its own sandboxes for another
// repository's, and a new id would make that so for good.
type DamagedIDError struct{ Path string }

func (e *DamagedIDError) Error() string {
	return fmt.Sprintf(`%s is damaged: write {"id": "<id>"} into it with the 8 hex digits this repository's container names carry (litterbox-<repo-slug>-<id>-<name>, as docker ps -a --filter label=dev.litterbox.managed=true shows), or remove it if the repository has no sandboxes`, e.Path)
}

func readIdentity(common string) (identityFile, error) {
	var f identityFile
	data, err := os.ReadFile(layout.Identity(common))
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil || !idRE.MatchString(f.ID) {
		return identityFile{}, &DamagedIDError{Path: layout.Identity(common)}
	}
	return f, nil
}

// repoIdentity returns the short random id that makes this repository's
// resource names its own. A random id, not a digest of the path, so that a
// repository keeps its sandboxes when it is moved; a copy (cp -r) whose
// original is still in place gets a new one, so the two never share.
func repoIdentity(common string) (string, error) {
	if f, err := readIdentity(common); err == nil && (f.CommonDir == common || sameDir(f.CommonDir, common)) {
		return f.ID, nil
	}
	// The first use, a move or a copy: decided by one process at a time,
	// so that racing processes agree.
	unlock, err := layout.LockFile(layout.Identity(common) + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	f, err := readIdentity(common)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	case f.CommonDir == common || sameDir(f.CommonDir, common):
		return f.ID, nil // another process just decided
	default:
		if orig, err := readIdentity(f.CommonDir); err == nil && orig == f {
			f.ID = "" // a copy: the original still has it
		}
	}
	if f.ID == "" {
		var raw [4]byte
		if _, err := rand.Read(raw[:]); err != nil {
			return "", err
		}
		f.ID = hex.EncodeToString(raw[:])
	}
	f.CommonDir = common
	return f.ID, layout.WriteFileAtomic(layout.Identity(common), layout.JSON(f))
}

// PinRepoID gives the repository at commonDir the id given, for replay
// tests, whose transcripts name containers.
func PinRepoID(commonDir, id string) error {
	return layout.WriteFileAtomic(layout.Identity(commonDir), layout.JSON(identityFile{ID: id, CommonDir: commonDir}))
}

func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

// repoPath is the path that stands for the repository in labels and
// messages: the main work tree's root, as `git worktree list` names it.
func repoPath(root, gitDir, common string) string {
	switch {
	case gitDir == common:
		return root // the main work tree
	case filepath.Base(common) == ".git":
		return filepath.Dir(common)
	}
	return common
}

// ForeignError refuses to act on an engine resource of another repository.
type ForeignError struct {
	Resource string // "container litterbox-app-x"
	Owner    string // the owner's repository path
	// Sandbox is set when this repository has a sandbox of that name (its
	// branch or record), whose own container is then missing.
	Sandbox string
}

func (e *ForeignError) Error() string {
	msg := fmt.Sprintf("%s belongs to %s, not to this repository; nothing was done to it", e.Resource, e.Owner)
	if e.Sandbox != "" {
		msg = fmt.Sprintf("sandbox '%s' is missing here: %s (`litterbox delete %s` removes only this repository's branch and state)", e.Sandbox, msg, e.Sandbox)
	}
	return msg
}

// owns reports whether the resource named name with these labels is this
// repository's.
func (m *Manager) owns(ctx context.Context, name string, labels map[string]string) bool {
	if id := labels[LabelRepoID]; id != "" {
		return id == m.RepoID
	}
	// An older release labelled containers with the root of the work tree
	// it ran in, and volumes with no repository at all. The proof is this
	// git dir's record naming the resource, unless the repository the
	// label names has a record naming it too (the original of a copy).
	slug := labels[LabelSandbox]
	if !ParseNameExact(slug) || !recordNames(m.GitDir, slug, name) {
		return false
	}
	repo := labels[LabelRepo]
	if repo == "" || repo == m.RepoPath || repo == m.Root || slices.Contains(m.worktreeRoots(ctx), repo) {
		return true
	}
	return !recordNames(commonDirOf(repo), slug, name)
}

// commonDirOf finds the common git dir of the work tree at root the way git
// does, without running it: .git is that dir, or a file naming a linked
// work tree's git dir, whose commondir file names the common one.
func commonDirOf(root string) string {
	dotgit := filepath.Join(root, ".git")
	data, err := os.ReadFile(dotgit)
	if err != nil {
		return dotgit // a directory, or nothing at all
	}
	gitDir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
	if !ok {
		return dotgit
	}
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join(root, gitDir)
	}
	common, err := os.ReadFile(filepath.Join(gitDir, "commondir"))
	if err != nil {
		return gitDir
	}
	c := strings.TrimSpace(string(common))
	if !filepath.IsAbs(c) {
		c = filepath.Join(gitDir, c)
	}
	return filepath.Clean(c)
}

// recordNames reports whether the sandbox record of slug in gitDir names
// the container or volume name.
func recordNames(gitDir, slug, name string) bool {
	rec, err := layout.New(gitDir).Store().Load(slug)
	return err == nil && rec != nil && (rec.Container == name || rec.Volume == name)
}

// worktreeRoots are the roots of this repository's work trees, asked once.
func (m *Manager) worktreeRoots(ctx context.Context) []string {
	m.worktreesOnce.Do(func() { m.worktrees, _ = m.Git.WorktreeRoots(ctx) })
	return m.worktrees
}

// foreign is the refusal for a resource owns rejected.
func foreign(kind, name string, labels map[string]string) *ForeignError {
	owner := labels[LabelRepo]
	if owner == "" {
		owner = "another repository"
	}
	return &ForeignError{Resource: kind + " " + name, Owner: owner}
}
