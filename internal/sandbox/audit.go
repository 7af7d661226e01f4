package sandbox

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/litterbox-dev/litterbox/internal/secrets"
	"github.com/litterbox-dev/litterbox/runner"
)

// AuditEntry is one MCP tool call in the audit log: what was asked, how it
// ended, and every docker and git command it caused.
type AuditEntry struct {
	Time       time.Time               `json:"time"`
	Tool       string                  `json:"tool"`
	Sandbox    string                  `json:"sandbox,omitempty"`
	Arguments  map[string]any          `json:"arguments"`
	Status     string                  `json:"status"` // ok or error
	Error      string                  `json:"error,omitempty"`
	DurationMS int64                   `json:"duration_ms"`
	PID        int                     `json:"pid"`
	Commands   []runner.AuditedCommand `json:"commands"`
	// Refused counts, by host:port, the connections the sandbox's egress
	// proxy refused during the call.
	Refused map[string]int `json:"refused,omitempty"`
}

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

// capEntry bounds every text of e an agent chose at MaxMessage bytes:
// arguments (commands, messages, patterns), the error and the commands
// run, whose lines carry an agent's command too. A 30 MB message is
// recorded as its head, its size and its SHA-256, as file contents are.
func capEntry(e AuditEntry, sec *secrets.Values) AuditEntry {
	args := make(map[string]any, len(e.Arguments))
	for k, v := range e.Arguments {
		if s, ok := v.(string); ok {
			s = sec.Redact(s)
			v = s
			if len(s) > MaxMessage {
				sum := sha256.Sum256([]byte(s))
				v = map[string]any{"bytes": len(s), "sha256": hex.EncodeToString(sum[:]), "head": capText(s, MaxMessage)}
			}
		}
		args[k] = v
	}
	e.Arguments = args
	e.Error = capNoted(sec.Redact(e.Error))
	cmds := make([]runner.AuditedCommand, len(e.Commands))
	for i, c := range e.Commands {
		c.Line, c.Note, c.Error = capNoted(sec.Redact(c.Line)), capNoted(sec.Redact(c.Note)), capNoted(sec.Redact(c.Error))
		cmds[i] = c
	}
	e.Commands = cmds
	return e
}

// capNoted is s, or its head with a note of its size and SHA-256.
func capNoted(s string) string {
	if len(s) <= MaxMessage {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return capText(s, MaxMessage) + fmt.Sprintf(" ...(cut: %d bytes in all, sha256 %s)", len(s), hex.EncodeToString(sum[:]))
}

// AuditPath is the repository's audit log, JSON lines under the git dir.
func (m *Manager) AuditPath() string { return m.layout().Audit() }

// AppendAudit adds one entry to the audit log. Each entry is one write of one
// line under an exclusive lock, so entries of concurrent servers never mix.
func (m *Manager) AppendAudit(e AuditEntry) error {
	// An agent may have typed a secret's value into an argument, or a
	// command may have printed it into an error: masked before any text
	// is cut, so no piece of a value is left at a cut.
	sec := m.secrets.Seen()
	line, err := json.Marshal(capEntry(e, sec))
	if err != nil {
		return err
	}
	line = sec.RedactJSON(line)
	path := m.AuditPath()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
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

// ReadAudit returns the audit log's entries, only those of one sandbox when
// name is set. A damaged line is reported, not skipped silently.
func (m *Manager) ReadAudit(name string) ([]AuditEntry, error) {
	slug := ""
	if name != "" {
		var err error
		if slug, err = m.resolve(name); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(m.AuditPath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []AuditEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var e AuditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return out, fmt.Errorf("%s line %d: %w", m.AuditPath(), n, err)
		}
		if slug == "" || e.Sandbox == slug {
			out = append(out, e)
		}
	}
	return out, sc.Err()
}
