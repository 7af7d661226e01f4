package hostrepo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
)

// OutputCap is how much of each output stream of a command is kept.
const OutputCap = 256 << 10

// LoadSnap reads sandbox slug's snapshot state: the manifest generation
// and what the last call left withheld.
func (r *Repo) LoadSnap(slug string) (snapshot.State, error) {
	var st snapshot.State
	data, err := os.ReadFile(r.Layout().Snapshot(slug))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(data, &st)
}

// SaveSnap writes sandbox slug's snapshot state.
func (r *Repo) SaveSnap(slug string, st snapshot.State) error {
	return layout.WriteFileAtomic(r.Layout().Snapshot(slug), layout.JSON(st))
}

// SnapStore is where sandbox slug's calls commit, within lim: its branch
// and rules mirror (its .gitignore and .gitattributes files,
// as they are in the container).
func (r *Repo) SnapStore(slug string, lim layout.Limits) *snapshot.Store {
	n := r.Names(slug)
	return &snapshot.Store{
		MaxFile: lim.MaxFileSize, MaxCall: lim.MaxCallSize,
		Git: r.Git, GitDir: r.GitDir, Ref: n.Ref, Branch: n.Branch,
		Rules: r.Layout().Ignore(slug), Tmp: r.Layout().TmpOf(slug),
		Author: r.AgentIdent(slug), Committer: func(ctx context.Context) gitcli.Ident { return r.Committer(ctx, slug) },
	}
}

// AgentIdent is the author of sandbox slug's snapshot commits.
func (r *Repo) AgentIdent(slug string) gitcli.Ident {
	return gitcli.Ident{Name: slug + " (litterbox)", Email: "litterbox@localhost"}
}

// Committer is the user's identity when git has one, else the agent's, so
// snapshots work on machines with no git identity at all.
func (r *Repo) Committer(ctx context.Context, slug string) gitcli.Ident {
	r.identOnce.Do(func() {
		id, err := r.Git.Identity(ctx)
		if err == nil && id.Name != "" && id.Email != "" {
			r.ident = &id
		}
	})
	if r.ident != nil {
		return *r.ident
	}
	return r.AgentIdent(slug)
}

// CommitMessage builds "<kind>: <detail>" with a subject under 72 characters
// and the full detail in the body when the subject had to be shortened.
// The detail comes from the agent, and git log prints messages as they
// are: control characters are written out as escapes.
//
// The body is capped at agenttext.MaxMessage bytes: a command of megabytes still runs,
// but its record on the branch is its head, its size and its digest.
func CommitMessage(kind, detail string) string {
	detail = agenttext.Inert(detail)
	subject := kind + ": " + agenttext.FirstLine(agenttext.Cap(detail, agenttext.MaxMessage))
	full := strings.TrimSpace(detail)
	if len(full) > agenttext.MaxMessage {
		sum := sha256.Sum256([]byte(full))
		full = agenttext.Cap(full, agenttext.MaxMessage) + fmt.Sprintf("\n(cut: %d bytes in all, sha256 %s; the audit log keeps the same head and digest)", len(full), hex.EncodeToString(sum[:]))
	}
	if len(subject) < 72 && !strings.Contains(full, "\n") {
		return subject + "\n"
	}
	if len(subject) >= 72 {
		cut := 67
		for cut > 0 && !utf8.RuneStart(subject[cut]) {
			cut--
		}
		subject = subject[:cut] + "..."
	} else {
		subject += " ..."
	}
	return subject + "\n\n" + full + "\n"
}

// EnsureDir makes directory d if it is missing, and returns it.
func EnsureDir(d string) string {
	_ = os.MkdirAll(d, 0o755)
	return d
}

// Unexpected turns a clean EOF into an error: the answer stopped short.
func Unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
