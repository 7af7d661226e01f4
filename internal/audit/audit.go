// Package audit is the log of every agent call: one JSON line per MCP
// tool call with what was asked, how it ended and every command it caused,
// appended under a lock so concurrent servers never mix their lines, with
// file contents elided and every text an agent chose bounded and masked.
package audit

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/secrets"
	"github.com/litterbox-dev/litterbox/runner"
)

// Entry is one MCP tool call in the audit log: what was asked, how it
// ended, and every docker and git command it caused.
type Entry struct {
	Time       time.Time      `json:"time"`
	Tool       string         `json:"tool"`
	Sandbox    string         `json:"sandbox,omitempty"`
	Arguments  map[string]any `json:"arguments"`
	Status     string         `json:"status"` // ok or error
	Error      string         `json:"error,omitempty"`
	DurationMS int64          `json:"duration_ms"`
	PID        int            `json:"pid"`
	// Client is the MCP client's name, as it told the server.
	Client   string                  `json:"client,omitempty"`
	Commands []runner.AuditedCommand `json:"commands"`
	// Refused counts, by host:port, the connections the sandbox's egress
	// proxy refused during the call.
	Refused map[string]int `json:"refused,omitempty"`
	// Injected counts, by "SECRET@host", the requests to which the egress
	// proxy gave a secret during the call (the value never).
	Injected map[string]int `json:"injected,omitempty"`
	// ExitCode is the exit status of the call's command (bash, a run
	// session). Snapshot is the commit a call made, if any.
	ExitCode *int   `json:"exit_code,omitempty"`
	Snapshot string `json:"snapshot,omitempty"`
	// Commits end a `litterbox run` session's entry: the commits it made
	// (its start has status "started", no exit status and no commits).
	Commits []string `json:"commits,omitempty"`
}

// Counts is m for an entry: nil when empty, so the entry leaves it out.
func Counts(m map[string]int) map[string]int {
	if len(m) == 0 {
		return nil
	}
	return m
}

// Statuses of an entry.
const (
	StatusOK      = "ok"
	StatusError   = "error"
	StatusStarted = "started" // a run session began; its end is another entry
)

// elidedArguments are the tool arguments that carry file contents: the log
// keeps their size and digest, not the text.
var elidedArguments = map[string]bool{"content": true, "diff": true, "old_string": true, "new_string": true}

// ElideArguments returns args with file contents replaced by their size and
// SHA-256.
func ElideArguments(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		s, isString := v.(string)
		if !elidedArguments[k] || !isString {
			out[k] = v
			continue
		}
		sum := sha256.Sum256([]byte(s))
		out[k] = map[string]any{"bytes": len(s), "sha256": hex.EncodeToString(sum[:])}
	}
	return out
}

// capEntry bounds every text of e an agent chose at agenttext.MaxMessage bytes:
// arguments (commands, messages, patterns), the error and the commands
// run, whose lines carry an agent's command too. A 30 MB message is
// recorded as its head, its size and its SHA-256, as file contents are.
func capEntry(e Entry, sec *secrets.Values) Entry {
	args := make(map[string]any, len(e.Arguments))
	for k, v := range e.Arguments {
		if s, ok := v.(string); ok {
			s = sec.Redact(s)
			v = s
			if len(s) > agenttext.MaxMessage {
				sum := sha256.Sum256([]byte(s))
				v = map[string]any{"bytes": len(s), "sha256": hex.EncodeToString(sum[:]), "head": agenttext.Cap(s, agenttext.MaxMessage)}
			}
		}
		args[k] = v
	}
	e.Arguments = args
	e.Error = agenttext.CapNoted(sec.Redact(e.Error))
	cmds := make([]runner.AuditedCommand, len(e.Commands))
	for i, c := range e.Commands {
		c.Line, c.Note, c.Error = agenttext.CapNoted(sec.Redact(c.Line)), agenttext.CapNoted(sec.Redact(c.Note)), agenttext.CapNoted(sec.Redact(c.Error))
		cmds[i] = c
	}
	e.Commands = cmds
	return e
}

// Log is one repository's audit log.
type Log struct{ Path string }

// Append adds one entry to the log, with sec's values masked. Each entry
// is one write of one line under an exclusive lock, so entries of
// concurrent servers never mix.
func (l Log) Append(e Entry, sec *secrets.Values) error {
	// An agent may have typed a secret's value into an argument, or a
	// command may have printed it into an error: masked before any text
	// is cut, so no piece of a value is left at a cut.
	line, err := json.Marshal(capEntry(e, sec))
	if err != nil {
		return err
	}
	line = sec.RedactJSON(line)
	if err := os.MkdirAll(filepath.Dir(l.Path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(l.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // released on close anyway
	_, err = f.Write(append(line, '\n'))
	return err
}

// Read returns the log's entries, only those of sandbox slug when slug is
// set. A damaged line is reported, not skipped silently.
func (l Log) Read(slug string) ([]Entry, error) {
	out, _, err := l.ReadFrom(0, slug)
	return out, err
}

// ReadFrom returns the entries of the whole lines from byte off on (of
// sandbox slug when set), and the offset after the last of them: the
// offset to read from next, when following the log as it grows. A line
// still being written is left for the next read.
func (l Log) ReadFrom(off int64, slug string) ([]Entry, int64, error) {
	f, err := os.Open(l.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, off, nil
	}
	if err != nil {
		return nil, off, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, off, err
	}
	var out []Entry
	r := bufio.NewReaderSize(f, 64<<10)
	start := off
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return out, off, nil
		}
		if err != nil {
			return out, off, err
		}
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			if start == 0 {
				return out, off, fmt.Errorf("%s line %d: %w", l.Path, n, err)
			}
			return out, off, fmt.Errorf("%s at byte %d: %w", l.Path, off, err)
		}
		off += int64(len(line))
		if slug == "" || e.Sandbox == slug {
			out = append(out, e)
		}
	}
}
