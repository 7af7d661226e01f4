package hostrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/devcontainer"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/secrets"
)

// The committed config comes with the repository, possibly someone else's,
// or merged from an agent's branch: what it loosens needs the user's word,
// given with `litterbox trust` (as direnv allow and mise trust do). The
// word is the digest of the file, so a changed file needs it again; a
// build's Dockerfile is allowed the same way, under a key of its own.

// FlagNetwork is the source of a network named on create's command line,
// the one place "host" is taken from.
const FlagNetwork = "--network"

// TrustPath is the file of the repository's trust records.
func (r *Repo) TrustPath() string { return r.Layout().Trust() }

// TrustRecords maps a work tree's root to the digest of the committed
// config its user allowed.
type TrustRecords map[string]string

// LoadTrust reads the trust records; none when the file is missing.
func (r *Repo) LoadTrust() (TrustRecords, error) {
	recs := TrustRecords{}
	data, err := os.ReadFile(r.TrustPath())
	if errors.Is(err, fs.ErrNotExist) {
		return recs, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &recs); err != nil {
		return nil, fmt.Errorf("%s is damaged (%v); remove it and run litterbox trust again", r.TrustPath(), err)
	}
	return recs, nil
}

// CommittedDigest is the digest of the work tree's committed config, ""
// when there is none: .litterbox.toml's alone (as before devcontainer.json
// counted), or, with a devcontainer.json, of both files by name.
func (r *Repo) CommittedDigest() (digest string, files []string, err error) {
	toml, err := os.ReadFile(filepath.Join(r.Root, config.File))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", nil, err
	}
	if err == nil {
		files = append(files, config.File)
	}
	dc, err := devcontainer.Find(r.Root)
	if err != nil {
		return "", nil, err
	}
	if dc == "" {
		if files == nil {
			return "", nil, nil
		}
		sum := sha256.Sum256(toml)
		return "sha256:" + hex.EncodeToString(sum[:]), files, nil
	}
	data, err := os.ReadFile(filepath.Join(r.Root, filepath.FromSlash(dc)))
	if err != nil {
		return "", nil, err
	}
	files = append(files, dc)
	h := sha256.New()
	if toml != nil {
		fmt.Fprintf(h, "%s\x00%d\x00", config.File, len(toml))
		h.Write(toml)
	}
	fmt.Fprintf(h, "%s\x00%d\x00", dc, len(data))
	h.Write(data)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), files, nil
}

// TrustState says whether the committed config is allowed.
type TrustState int

// Trust states of the committed config.
const (
	Untrusted TrustState = iota
	Trusted
	// Changed: trusted once, edited since.
	Changed
)

// TrustState says whether this work tree's committed config is trusted as
// it is now.
func (r *Repo) TrustState() (TrustState, error) {
	digest, _, err := r.CommittedDigest()
	if err != nil {
		return Untrusted, err
	}
	recs, err := r.LoadTrust()
	if err != nil {
		return Untrusted, err
	}
	switch rec := recs[r.Root]; {
	case rec == "":
		return Untrusted, nil
	case rec == digest:
		return Trusted, nil
	}
	return Changed, nil
}

// BuildTrustKey is the trust record of a work tree's build, beside the
// record of its config: the Dockerfile the committed config builds from
// runs RUN steps on this machine's engine, so a changed one needs the
// user's word again, as a changed config does.
func BuildTrustKey(root string) string { return "build:" + root }

// Untrust withdraws the trust of this work tree's committed config.
func (r *Repo) Untrust() error {
	unlock, err := layout.LockFile(r.TrustPath() + ".lock")
	if err != nil {
		return err
	}
	defer unlock()
	recs, err := r.LoadTrust()
	if err != nil {
		return err
	}
	delete(recs, r.Root)
	delete(recs, BuildTrustKey(r.Root))
	return layout.WriteFileAtomic(r.TrustPath(), layout.JSON(recs))
}

// WeakeningError refuses a setting that loosens the sandbox from a source
// that may not: the committed config before `litterbox trust`, or network
// "host" from any file.
type WeakeningError struct {
	Weakening config.Weakening
	State     TrustState
}

func (e *WeakeningError) Error() string {
	w := e.Weakening
	if w.Key == "docker.network" && w.Value == strconv.Quote("host") {
		return fmt.Sprintf(`%s sets docker.network = "host", which shares the host's network with the sandbox; Litterbox takes that only from the command line: litterbox create NAME --network host`, w.File)
	}
	why := "this repository's committed config is not trusted"
	if e.State == Changed {
		why = "the committed config has changed since it was trusted"
		if w.File == config.File {
			why = config.File + " has changed since it was trusted"
		}
	}
	return fmt.Sprintf("%s sets %s, which loosens the sandbox, and %s: read it, then allow it with litterbox trust (or set it in %s)", w.File, w, why, config.LocalFile)
}

// CheckWeakenings refuses what cfg loosens from a source that may not, and
// describes the rest for create's output.
func (r *Repo) CheckWeakenings(ctx context.Context, cfg config.Config) ([]string, error) {
	return r.AllowWeakenings(ctx, cfg.Weakenings())
}

// AllowWeakenings is CheckWeakenings for some of a config's weakenings.
func (r *Repo) AllowWeakenings(ctx context.Context, ws []config.Weakening) ([]string, error) {
	// Each asked once, and only when a setting of that file needs it.
	trust := sync.OnceValues(r.TrustState)
	localTracked := sync.OnceValue(func() bool {
		_, err := r.Git.Output(ctx, "ls-files", "--error-unmatch", "--", config.LocalFile)
		return err == nil
	})
	out := []string{}
	for _, w := range ws {
		switch {
		case w.File == "":
			continue // set by the caller, not by a file
		case w.Key == "docker.network" && w.Value == strconv.Quote("host") && w.File != FlagNetwork:
			return nil, &WeakeningError{Weakening: w}
		case w.File == config.LocalFile && localTracked():
			return nil, fmt.Errorf("%s sets %s, which loosens the sandbox, but git tracks %s, so it comes with the repository like %s: untrack it (git rm --cached %s) to keep it yours", w.File, w, config.LocalFile, config.File, config.LocalFile)
		case config.IsCommitted(w.File):
			state, err := trust()
			if err != nil {
				return nil, err
			}
			if state != Trusted {
				return nil, &WeakeningError{Weakening: w, State: state}
			}
			out = append(out, fmt.Sprintf("%s (%s, trusted)", w, w.File))
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s)", w, w.File))
	}
	return out, nil
}

// CallConfig is what a call honours of the config as it is now: its bounds,
// so one raised in .litterbox.local.toml holds from the next call on, and
// where its secrets come from. When the config cannot be read or may not
// loosen them, those fixed at create hold, and note says why.
func (r *Repo) CallConfig(ctx context.Context, rec *layout.Record) (lim layout.Limits, specs map[string]config.SecretSpec, note string) {
	cfg, err := config.Load(r.Root)
	if err == nil {
		_, err = r.AllowWeakenings(ctx, slices.DeleteFunc(cfg.Weakenings(), func(w config.Weakening) bool {
			return !limitKeys[w.Key] && !strings.HasPrefix(w.Key, "secrets.")
		}))
	}
	if err != nil {
		return rec.Limits.OrDefaults(), rec.Secrets, "the config's bounds are not used, those of create hold: " + err.Error()
	}
	return layout.LimitsOf(cfg), cfg.Secrets, ""
}

// limitKeys are the weakenings of the bounds a call reads afresh.
var limitKeys = map[string]bool{"docker.disk": true, "snapshot.max-file-size": true, "snapshot.max-call-size": true}

// SecretsFor reads the secrets a sandbox of this repository gets now, with
// the rule of every call (see CallConfig).
func (r *Repo) SecretsFor(ctx context.Context, slug string) (*secrets.Values, error) {
	rec, err := r.Store().Load(slug)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		rec = &layout.Record{}
	}
	_, specs, _ := r.CallConfig(ctx, rec)
	sec, err := r.Secrets.Resolve(ctx, specs)
	return sec.InSandbox(specs, Placeholders(rec)), err
}

// Placeholders are the placeholders of a sandbox's injected secrets.
func Placeholders(rec *layout.Record) map[string]string {
	if rec == nil || rec.Injection == nil {
		return nil
	}
	return rec.Injection.Placeholders
}
