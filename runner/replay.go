package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Entry is one command in a transcript. Paths that differ between runs (a test's
// temp repo) are stored with placeholders; see Subst.
type Entry struct {
	Argv  []string `json:"argv"`
	Dir   string   `json:"dir,omitempty"`
	Stdin string   `json:"stdin_sha256,omitempty"`
	// StdinKey is Cmd.StdinKey of the stdin, for a command that has one.
	StdinKey string `json:"stdin,omitempty"`
	Stdout   string `json:"stdout,omitempty"`
	// StdoutB64 holds binary output (a tar stream): a JSON string cannot carry
	// invalid UTF-8 and blows NUL bytes up sixfold.
	StdoutB64 string `json:"stdout_base64,omitempty"`
	Stderr    string `json:"stderr,omitempty"`
	ExitCode  int    `json:"exit_code"`
}

// Subst maps run-specific strings to stable placeholders, e.g. the temp repo
// path to "$REPO". Longer keys are applied first.
type Subst map[string]string

func (s Subst) apply(str string, toPlaceholder bool) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return len(b) - len(a) })
	for _, k := range keys {
		if toPlaceholder {
			str = strings.ReplaceAll(str, k, s[k])
		} else {
			str = strings.ReplaceAll(str, s[k], k)
		}
	}
	return str
}

func (s Subst) all(in []string, toPlaceholder bool) []string {
	out := make([]string, len(in))
	for i, a := range in {
		out[i] = s.apply(a, toPlaceholder)
	}
	return out
}

// Recorder runs commands with an inner Runner and keeps a transcript of them.
type Recorder struct {
	Inner Runner
	Subst Subst

	mu      sync.Mutex
	entries []Entry
}

// Run runs c for real and records it.
func (r *Recorder) Run(ctx context.Context, c Cmd) (Result, error) {
	if c.Carried != nil {
		return *c.Carried, nil // no process of its own
	}
	h := sha256.New()
	named := c.Stdin
	var keyed bytes.Buffer
	if c.Stdin != nil {
		var w io.Writer = h
		if c.StdinKey != nil {
			w = &keyed
		}
		c.Stdin = io.TeeReader(c.Stdin, w)
	}
	var streamed bytes.Buffer
	if c.Stdout != nil {
		c.Stdout = io.MultiWriter(c.Stdout, &streamed)
	}
	res, err := r.Inner.Run(ctx, c)
	out := res.Stdout
	if c.Stdout != nil {
		out = streamed.Bytes()
	}
	e := Entry{
		Argv:     r.Subst.all(c.Argv(), true),
		Dir:      r.Subst.apply(c.Dir, true),
		Stderr:   r.Subst.apply(string(res.Stderr), true),
		ExitCode: res.ExitCode,
	}
	if utf8.Valid(out) && bytes.IndexByte(out, 0) < 0 {
		e.Stdout = r.Subst.apply(string(out), true)
	} else {
		e.StdoutB64 = base64.StdEncoding.EncodeToString(out)
	}
	switch {
	case named != nil && c.StdinKey != nil:
		e.StdinKey = r.Subst.apply(c.StdinKey(keyed.Bytes()), true)
	case named != nil:
		e.Stdin = stdinDigest(Cmd{Stdin: named}, h)
	}
	r.mu.Lock()
	r.entries = append(r.entries, e)
	r.mu.Unlock()
	return res, err
}

// Save writes the transcript as indented JSON.
func (r *Recorder) Save(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	data, err := json.MarshalIndent(r.entries, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Replayer serves a transcript back instead of running anything. A command
// matches the first unused entry with the same argv and dir, so repeated
// identical commands are served in recorded order while commands running
// concurrently (the two ends of a pipe) may arrive in either order. Stdin is
// hashed while stdout is served, so a conversation over both (an interactive
// exec) replays too; a different stdin is reported afterwards.
type Replayer struct {
	Subst Subst

	mu      sync.Mutex
	entries []Entry
	used    []bool
	errs    []string
}

// LoadReplayer reads a transcript written by Recorder.Save.
func LoadReplayer(path string, subst Subst) (*Replayer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries []Entry
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Replayer{Subst: subst, entries: entries, used: make([]bool, len(entries))}, nil
}

// Run serves c from the transcript. A cancelled context does not stop a
// recorded command from being served: when one end of a pipe fails, whether
// the other end had started is a race, and replays must not depend on it.
func (r *Replayer) Run(_ context.Context, c Cmd) (Result, error) {
	if c.Carried != nil {
		return *c.Carried, nil
	}
	argv := r.Subst.all(c.Argv(), true)
	dir := r.Subst.apply(c.Dir, true)
	r.mu.Lock()
	idx := -1
	for i, e := range r.entries {
		if !r.used[i] && slices.Equal(e.Argv, argv) && e.Dir == dir {
			idx = i
			break
		}
	}
	if idx < 0 {
		r.errs = append(r.errs, "unexpected command: "+Join(argv))
		r.mu.Unlock()
		// Fail at once, without reading stdin: in a conversation the caller
		// only closes it after our answer, which will never come.
		return Result{ExitCode: -1}, &StartError{Cmd: c, Err: fmt.Errorf("replay: unexpected command %s", Join(argv))}
	}
	r.used[idx] = true
	e := r.entries[idx]
	r.mu.Unlock()

	stdout := []byte(r.Subst.apply(e.Stdout, false))
	if e.StdoutB64 != "" {
		b, err := base64.StdEncoding.DecodeString(e.StdoutB64)
		if err != nil {
			return Result{ExitCode: -1}, &StartError{Cmd: c, Err: err}
		}
		stdout = b
	}
	digest := make(chan string, 1)
	switch {
	case c.Stdin != nil && c.StdinKey != nil:
		go func() {
			all, _ := io.ReadAll(c.Stdin)
			digest <- r.Subst.apply(c.StdinKey(all), true)
		}()
	case c.Stdin != nil:
		go func() {
			h := sha256.New()
			_, _ = io.Copy(h, c.Stdin)
			digest <- stdinDigest(c, h)
		}()
	default:
		digest <- ""
	}
	want := e.Stdin
	if c.StdinKey != nil {
		want = e.StdinKey
	}
	res := Result{Stdout: stdout, Stderr: []byte(r.Subst.apply(e.Stderr, false)), ExitCode: e.ExitCode}
	var werr error
	if c.Stdout != nil {
		_, werr = c.Stdout.Write(res.Stdout)
		res.Stdout = nil
	}
	if c.Stderr != nil {
		_, _ = c.Stderr.Write(res.Stderr)
	}
	if d := <-digest; d != want {
		note := stdinNote(d)
		if c.StdinKey != nil {
			note = "\n  recorded:\n" + indent(want) + "  given:\n" + indent(d)
		}
		r.mu.Lock()
		r.errs = append(r.errs, "different stdin for: "+Join(argv)+note)
		r.mu.Unlock()
	}
	if werr != nil {
		return res, &StartError{Cmd: c, Err: werr}
	}
	if e.ExitCode != 0 {
		return res, &ExitError{Cmd: c, Result: res}
	}
	return res, nil
}

// stdinDigest is how a transcript knows a command's input: its sha256, or
// the name a NamedReader gives content that differs from build to build.
func stdinDigest(c Cmd, h hash.Hash) string {
	if n, ok := c.Stdin.(*NamedReader); ok {
		return "name:" + n.Name
	}
	return hex.EncodeToString(h.Sum(nil))
}

func stdinNote(d string) string {
	if strings.HasPrefix(d, "name:") {
		return " (stdin " + d + ")"
	}
	if d == "" {
		return ""
	}
	return " (stdin sha256 " + d[:12] + ")"
}

func indent(s string) string {
	if s == "" {
		return "    (nothing)\n"
	}
	return "    " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n    ") + "\n"
}

// Problems lists unexpected commands and recorded commands never run.
func (r *Replayer) Problems() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.errs)
	for i, e := range r.entries {
		if !r.used[i] {
			out = append(out, "expected command never ran: "+Join(e.Argv))
		}
	}
	return out
}
