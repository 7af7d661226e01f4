package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Record is the mutable per-sandbox state Litterbox keeps in the repository's
// git dir (never in tracked files, never in the index).
type Record struct {
	Name      string       `json:"name"`
	Branch    string       `json:"branch"`
	Container string       `json:"container"`
	Volume    string       `json:"volume"`
	Base      string       `json:"base"`
	Image     string       `json:"image"`
	Created   time.Time    `json:"created"`
	Status    string       `json:"status"`
	Setup     *SetupResult `json:"setup,omitempty"`
}

// Record statuses.
const (
	recCreating    = "creating"
	recReady       = "ready"
	recFailedSetup = StatusFailedSetup
)

// SetupResult is what the setup command did.
type SetupResult struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
}

type store struct{ dir string }

func (s store) path(slug string) string { return filepath.Join(s.dir, slug+".json") }

func (s store) save(r *Record) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	// Write then rename, so a reader never sees half a record.
	tmp, err := os.CreateTemp(s.dir, "."+r.Name+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), s.path(r.Name))
}

// load returns the record of slug, or nil when there is none.
func (s store) load(slug string) (*Record, error) {
	data, err := os.ReadFile(s.path(slug))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path(slug), err)
	}
	return &r, nil
}

func (s store) remove(slug string) error {
	err := os.Remove(s.path(slug))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// all returns every record, by slug. Unreadable ones are skipped: list must
// still answer when one file is damaged.
func (s store) all() map[string]*Record {
	out := map[string]*Record{}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		slug, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(slug, ".") {
			continue
		}
		if r, err := s.load(slug); err == nil && r != nil {
			out[slug] = r
		}
	}
	return out
}
