package layout

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
)

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
	data, err := os.ReadFile(Identity(common))
	if err != nil {
		return f, err
	}
	if err := json.Unmarshal(data, &f); err != nil || !idRE.MatchString(f.ID) {
		return identityFile{}, &DamagedIDError{Path: Identity(common)}
	}
	return f, nil
}

// RepoID returns the short random id that makes this repository's
// resource names its own. A random id, not a digest of the path, so that a
// repository keeps its sandboxes when it is moved; a copy (cp -r) whose
// original is still in place gets a new one, so the two never share.
func RepoID(common string) (string, error) {
	if f, err := readIdentity(common); err == nil && (f.CommonDir == common || sameDir(f.CommonDir, common)) {
		return f.ID, nil
	}
	// The first use, a move or a copy: decided by one process at a time,
	// so that racing processes agree.
	unlock, err := LockFile(Identity(common) + ".lock")
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
	return f.ID, WriteFileAtomic(Identity(common), JSON(f))
}

// PinRepoID gives the repository at commonDir the id given, for replay
// tests, whose transcripts name containers.
func PinRepoID(commonDir, id string) error {
	return WriteFileAtomic(Identity(commonDir), JSON(identityFile{ID: id, CommonDir: commonDir}))
}

// sameDir says whether a and b are one directory.
func sameDir(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
