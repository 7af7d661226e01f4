package layout

import (
	"github.com/litterbox-dev/litterbox/internal/box"

	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/ports"
)

// Layer is what a sandbox's /src is made of when it lies over a base
// tree: the tree's volume, read by every sandbox of that base and written
// by none, and the sandbox's own volumes holding what it wrote.
type Layer struct {
	Base  string `json:"base"`
	Upper string `json:"upper"`
	Work  string `json:"work"`
	// Cache, when set, is the setup cache entry's volume whose src/ lies
	// between the tree and the sandbox's writes: a create that found the
	// setup's result in the cache shows it without copying it. Its home
	// then lies over the entry's home/, with its writes in HomeUpper and
	// HomeWork.
	Cache     string `json:"cache,omitempty"`
	HomeUpper string `json:"home_upper,omitempty"`
	HomeWork  string `json:"home_work,omitempty"`
}

// Own are the volumes of l's layers that belong to the sandbox alone.
func (l *Layer) Own() []string {
	own := []string{l.Upper, l.Work}
	if l.HomeUpper != "" {
		own = append(own, l.HomeUpper, l.HomeWork)
	}
	return own
}

// Record is the mutable per-sandbox state Litterbox keeps in the repository's
// git dir (never in tracked files, never in the index).
type Record struct {
	Name      string `json:"name"`
	Branch    string `json:"branch"`
	Container string `json:"container"`
	// ContainerID is the engine's id of Container, as its making (or the
	// pool entry's) returned it, on a runtime with ids (box.Caps.IDs):
	// calls address the box by it, which proves it is the one made.
	ContainerID string `json:"container_id,omitempty"`
	Volume      string `json:"volume"`
	// Volumes are its volumes besides /src: its home, then one per kept
	// path; none for a sandbox of an older release, whose home was /tmp.
	Volumes []box.Mount `json:"volumes,omitempty"`
	// Layer, when set, says /src (Volume) is made over a base tree shared
	// with other sandboxes, with its writes in volumes of its own.
	Layer *Layer `json:"layer,omitempty"`
	// Pool is the warm pool entry the container was claimed from; its
	// volumes keep the entry's names.
	Pool    string       `json:"pool,omitempty"`
	Base    string       `json:"base"`
	Image   string       `json:"image"`
	Created time.Time    `json:"created"`
	Status  string       `json:"status"`
	Setup   *SetupResult `json:"setup,omitempty"`
	// User, Ports and Services are fixed at create from the config of that
	// moment; later edits of the config apply to new sandboxes only.
	User     string                        `json:"user,omitempty"`
	Ports    []ports.Port                  `json:"ports,omitempty"`
	Services map[string]config.ServiceSpec `json:"services,omitempty"`
	// Allow is the allowlist of a sandbox of network mode "allow", which
	// has an egress proxy.
	Allow []string `json:"allow,omitempty"`
	// Limits are the bounds of what the sandbox's calls bring to the host;
	// zero values (a record of an older release) are the defaults.
	Limits Limits `json:"limits"`
	// Secrets say where each secret's value is read, as create found them
	// allowed; never the values.
	Secrets map[string]config.SecretSpec `json:"secrets,omitempty"`
	// Injection is what the egress proxy needs, besides the values, for
	// the secrets it gives their hosts; nil when there are none.
	Injection *Injection `json:"injection,omitempty"`
	// Egress: the sandbox has an egress volume (and, with Allow, a proxy),
	// which delete removes.
	Egress bool `json:"egress,omitempty"`
	// Helper is the path of the sandbox helper delivered into the
	// container (the helper's directory); "" for a sandbox made before the helper.
	Helper string `json:"helper,omitempty"`
	// Isolation is "gvisor" for a sandbox that runs under gVisor; ""
	// (an older record) or "container" for the engine's default runtime.
	Isolation string `json:"isolation,omitempty"`
	// Client is the MCP client whose server made the sandbox (its name in
	// the handshake, or litterbox mcp --client); "" for a person's. A
	// server started again for the same client acts on it as its own.
	Client string `json:"client,omitempty"`
	// CreatorPID is the process running the create while Status is
	// "creating"; if it is gone, the create died half-way.
	CreatorPID int `json:"creator_pid,omitempty"`
}

// Limits bound what one sandbox's calls store on the host, fixed at create
// (after the config's loosening was allowed) like its network.
type Limits struct {
	MaxFileSize int64 `json:"max_file_size,omitempty"`
	MaxCallSize int64 `json:"max_call_size,omitempty"`
	Disk        int64 `json:"disk,omitempty"`
	// Output is how many bytes of each output stream a result keeps.
	Output int64 `json:"output,omitempty"`
}

// LimitsOf takes the bounds from cfg.
func LimitsOf(cfg config.Config) Limits {
	return Limits{MaxFileSize: cfg.MaxFileSize, MaxCallSize: cfg.MaxCallSize, Disk: cfg.Disk, Output: cfg.OutputLimit}
}

// OrDefaults fills what an older record lacks.
func (l Limits) OrDefaults() Limits {
	d := LimitsOf(config.Default())
	if l.MaxFileSize <= 0 {
		l.MaxFileSize = d.MaxFileSize
	}
	if l.MaxCallSize <= 0 {
		l.MaxCallSize = d.MaxCallSize
	}
	if l.Disk <= 0 {
		l.Disk = d.Disk
	}
	if l.Output <= 0 {
		l.Output = d.Output
	}
	return l
}

// Record statuses.
const (
	Creating    = "creating"
	Ready       = "ready"
	FailedSetup = "failed-setup"
)

// SetupResult is what the setup command did.
type SetupResult struct {
	Command  string `json:"command"`
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// Snapshot is the commit of what the setup command changed, if anything.
	Snapshot string `json:"snapshot,omitempty"`
	// Skipped: the image has no shell, so the command could not run.
	Skipped bool `json:"skipped,omitempty"`
}

// Store keeps one repository's records, a JSON file per sandbox.
type Store struct{ l Layout }

// Records is l's store of records.
func (l Layout) Store() Store { return Store{l: l} }

func (s Store) path(slug string) string { return s.l.Record(slug) }

// Injection is a sandbox's side of its injected secrets, kept on the host
// only (records are the user's alone, 0600): the placeholder the sandbox
// holds for each, and the sandbox's CA (see egress.CA), which the proxy
// is given again each time it starts.
type Injection struct {
	Placeholders map[string]string `json:"placeholders"`
	CACert       string            `json:"ca_cert"`
	CAKey        string            `json:"ca_key"`
}

// Save writes r.
func (s Store) Save(r *Record) error { return WriteFileAtomic(s.path(r.Name), JSON(r)) }

// WriteFileAtomic writes then renames, so a reader never sees half a file.
func WriteFileAtomic(name string, data []byte) error {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// Load returns the record of slug, or nil when there is none.
func (s Store) Load(slug string) (*Record, error) {
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

// Remove removes slug's record; none is no error.
func (s Store) Remove(slug string) error {
	err := os.Remove(s.path(slug))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// All returns every record, by slug. Unreadable ones are skipped: list must
// still answer when one file is damaged.
func (s Store) All() map[string]*Record {
	out := map[string]*Record{}
	entries, err := os.ReadDir(s.l.records())
	if err != nil {
		return out
	}
	for _, e := range entries {
		slug, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(slug, ".") {
			continue
		}
		if r, err := s.Load(slug); err == nil && r != nil {
			out[slug] = r
		}
	}
	return out
}

// JSON is v indented, with a final newline, as every state file is kept.
func JSON(v any) []byte {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(data, '\n')
}
