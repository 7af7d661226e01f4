package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/helper/protocol"
	"github.com/litterbox-dev/litterbox/runner"
	"github.com/litterbox-dev/litterbox/unidiff"
)

// DefaultBashTimeout is how long a bash call may run unless told otherwise.
const DefaultBashTimeout = 120 * time.Second

// ResolvePath makes p absolute inside the container: relative paths are under
// /src. The result is clean.
func ResolvePath(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = Workdir + "/" + p
	}
	return path.Clean(p)
}

// HiddenPathError refuses a path with a component starting with ".".
type HiddenPathError struct{ Path string }

func (e *HiddenPathError) Error() string {
	return fmt.Sprintf("path %q is hidden (a component starts with '.'); hidden files are not available to agents", e.Path)
}

func hidden(abs string) bool {
	for _, c := range strings.Split(abs, "/") {
		if strings.HasPrefix(c, ".") {
			return true
		}
	}
	return false
}

// MaxPathLen is PATH_MAX on Linux: a longer path could not name a file.
const MaxPathLen = 4096

// checkPath refuses what no file name in the sandbox can hold, before it
// reaches an argv: a NUL cannot be passed at all, and a newline would break
// the snapshot manifest, which is line-based.
func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("path is empty")
	case strings.ContainsRune(p, 0):
		return errors.New("path contains a NUL byte")
	case strings.ContainsAny(p, "\n\r"):
		return fmt.Errorf("path %q contains a line break, which Litterbox does not support in file names", p)
	case len(p) > MaxPathLen:
		return fmt.Errorf("path is %d bytes long; at most %d", len(p), MaxPathLen)
	}
	return nil
}

// visiblePath resolves p and refuses hidden paths.
func visiblePath(p string) (string, error) {
	if err := checkPath(p); err != nil {
		return "", err
	}
	abs := ResolvePath(p)
	if hidden(abs) {
		return "", &HiddenPathError{Path: p}
	}
	return abs, nil
}

// BashOptions are the inputs of Bash.
type BashOptions struct {
	Command string
	Workdir string
	Timeout time.Duration
	// Kind names the call in the snapshot message ("bash", or "exec" for the
	// CLI); default "bash".
	Kind string
	// Output, when set, receives the output as it comes, uncapped; the
	// result keeps the first OutputCap bytes of each stream all the same.
	Output *Output
}

// ErrNoShell is Bash's error in a sandbox whose image has no /bin/sh.
var ErrNoShell = errors.New("the image has no /bin/sh, so bash cannot run commands (read, write, edit, patch, ls, glob and grep work)")

// Bash runs a command with sh -c in the sandbox as the sandbox user and
// commits what it changed. On timeout every process it started is killed.
func (m *Manager) Bash(ctx context.Context, name string, o BashOptions) (*ActResult, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(o.Command) == "" {
		return nil, errors.New("command is empty")
	}
	if strings.ContainsRune(o.Command, 0) {
		return nil, errors.New("command contains a NUL byte")
	}
	if o.Workdir != "" {
		if err := checkPath(o.Workdir); err != nil {
			return nil, fmt.Errorf("workdir: %w", err)
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultBashTimeout
	}
	wd := Workdir
	if o.Workdir != "" {
		wd = ResolvePath(o.Workdir)
	}
	kind := o.Kind
	if kind == "" {
		kind = "bash"
	}
	// The host waits a little longer than the sandbox's own timeout, which is
	// the one that kills the command's processes.
	ctx, cancel := context.WithTimeout(ctx, o.Timeout+60*time.Second)
	defer cancel()
	res, err := m.act(ctx, slug, action{op: protocol.OpRun, arg: wd, cmd: o.Command, timeout: o.Timeout, output: o.Output, message: commitMessage(kind, o.Command)})
	if err == nil && res.noShell {
		return nil, fmt.Errorf("sandbox '%s': %w", slug, ErrNoShell)
	}
	return res, err
}

// MaxWriteSize bounds the content of one write.
const MaxWriteSize = 64 << 20

// Write replaces (or creates) a file with content and commits the change.
func (m *Manager) Write(ctx context.Context, name, p string, content []byte) (*ActResult, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	abs, err := writablePath(p)
	if err != nil {
		return nil, err
	}
	if len(content) > MaxWriteSize {
		return nil, fmt.Errorf("content is %d bytes; write takes at most %d (use bash to produce large files)", len(content), MaxWriteSize)
	}
	if err := m.outsideSubmodules(slug, abs); err != nil {
		return nil, err
	}
	return m.act(ctx, slug, m.writeAction(abs, p, content, "write"))
}

func (m *Manager) writeAction(abs, p string, content []byte, kind string) action {
	return action{op: protocol.OpWrite, arg: abs, content: bytes.NewReader(content), size: int64(len(content)), message: commitMessage(kind, p)}
}

func writablePath(p string) (string, error) {
	if err := checkPath(p); err != nil {
		return "", err
	}
	abs := ResolvePath(p)
	if abs == "/" || abs == Workdir {
		return "", fmt.Errorf("path %q is a directory", p)
	}
	return abs, nil
}

// readablePath is writablePath for tools that read the file first (edit,
// patch): their errors would reveal a hidden file's content, so hidden paths
// are refused as read refuses them.
func readablePath(p string) (string, error) {
	abs, err := writablePath(p)
	if err != nil {
		return "", err
	}
	if hidden(abs) {
		return "", &HiddenPathError{Path: p}
	}
	return abs, nil
}

// ErrNoSuchFile is returned when a file to read or change does not exist.
var ErrNoSuchFile = errors.New("no such file")

// catFile returns the content of a file in the sandbox, ErrNoSuchFile if it
// does not exist.
func (m *Manager) catFile(ctx context.Context, slug, abs string) ([]byte, error) {
	var out bytes.Buffer
	_, err := m.helperTool(ctx, slug, &out, "cat", abs, strconv.Itoa(MaxWriteSize))
	return out.Bytes(), err
}

// helperTool runs a read-only tool of the helper, its output to stdout.
// The helper's exit codes become ErrNoSuchFile (4) or an error with its
// message.
func (m *Manager) helperTool(ctx context.Context, slug string, stdout io.Writer, args ...string) (runner.Result, error) {
	h, err := m.helperFor(ctx, slug)
	if err != nil {
		return runner.Result{}, err
	}
	var errOut bytes.Buffer
	res, err := m.Provider.Exec(ctx, m.Names(slug).Container, dockercli.ExecSpec{Cmd: h.argv(args...)},
		dockercli.Streams{Stdout: stdout, Stderr: &errOut})
	if err != nil {
		return res, m.execError(ctx, slug, err)
	}
	switch res.ExitCode {
	case 0:
		return res, nil
	case 4:
		return res, fmt.Errorf("%s: %w", display(args[1]), ErrNoSuchFile)
	default:
		return res, errors.New(firstLine(errOut.String()))
	}
}

// helperJSON runs a helper tool that prints JSON into v.
func (m *Manager) helperJSON(ctx context.Context, slug string, v any, args ...string) error {
	var out bytes.Buffer
	if _, err := m.helperTool(ctx, slug, &out, args...); err != nil {
		return err
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		return fmt.Errorf("%s: unexpected answer from the sandbox helper: %w", args[0], err)
	}
	return nil
}

// EditResult says what Edit did.
type EditResult struct {
	Replacements int    `json:"replacements"`
	Snapshot     string `json:"snapshot"`
}

// Edit replaces old with new in a file: exactly one occurrence, or every one
// with replaceAll. A missing or ambiguous old string changes nothing.
func (m *Manager) Edit(ctx context.Context, name, p, old, new string, replaceAll bool) (*EditResult, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	abs, err := readablePath(p)
	if err != nil {
		return nil, err
	}
	if old == "" {
		return nil, errors.New("old_string is empty")
	}
	if old == new {
		return nil, errors.New("old_string and new_string are the same")
	}
	if err := m.outsideSubmodules(slug, abs); err != nil {
		return nil, err
	}
	unlock, err := m.lock(ctx, slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	content, err := m.catFile(ctx, slug, abs)
	if err != nil {
		return nil, err
	}
	updated, n, err := ReplaceString(string(content), old, new, replaceAll)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	res, err := m.actLocked(ctx, slug, m.writeAction(abs, p, []byte(updated), "edit"))
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("writing %s: %s", p, firstLine(res.Stderr))
	}
	return &EditResult{Replacements: n, Snapshot: res.Snapshot}, nil
}

// ReplaceString replaces old with new in s. Without all, old must occur
// exactly once.
func ReplaceString(s, old, new string, all bool) (string, int, error) {
	n := strings.Count(s, old)
	switch {
	case n == 0:
		return "", 0, errors.New("old_string not found")
	case n > 1 && !all:
		return "", 0, fmt.Errorf("old_string occurs %d times; give more context to make it unique, or set replace_all", n)
	}
	return strings.ReplaceAll(s, old, new), n, nil
}

// PatchResult says what Patch did.
type PatchResult struct {
	Snapshot string `json:"snapshot"`
	Created  bool   `json:"created,omitempty"`
	Deleted  bool   `json:"deleted,omitempty"`
}

// Patch applies a unified diff to one file; it may create or delete the
// file. A diff that does not apply changes nothing.
func (m *Manager) Patch(ctx context.Context, name, p, diff string) (*PatchResult, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	abs, err := readablePath(p)
	if err != nil {
		return nil, err
	}
	fp, err := unidiff.Parse(diff)
	if err != nil {
		return nil, err
	}
	if err := m.outsideSubmodules(slug, abs); err != nil {
		return nil, err
	}
	unlock, err := m.lock(ctx, slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	content, err := m.catFile(ctx, slug, abs)
	exists := err == nil
	if err != nil && !errors.Is(err, ErrNoSuchFile) {
		return nil, err
	}
	out, err := fp.Apply(content, exists)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	var a action
	if fp.Deletes {
		a = action{op: protocol.OpRemove, arg: abs, message: commitMessage("patch", p)}
	} else {
		a = m.writeAction(abs, p, out, "patch")
	}
	res, err := m.actLocked(ctx, slug, a)
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("writing %s: %s", p, firstLine(res.Stderr))
	}
	return &PatchResult{Snapshot: res.Snapshot, Created: !exists, Deleted: fp.Deletes}, nil
}

// ReadResult is a slice of a file's lines.
type ReadResult struct {
	Content    string `json:"content"`
	Offset     int    `json:"offset"`
	Lines      int    `json:"lines"`
	TotalLines int    `json:"total_lines"`
	Truncated  bool   `json:"truncated"`
}

// DefaultReadLimit is how many lines read returns unless told otherwise.
const DefaultReadLimit = 2000

// maxReadBytes bounds what one read returns.
const maxReadBytes = 256 << 10

// Read returns limit lines of a file from line offset (0-based). Hidden paths
// are refused.
func (m *Manager) Read(ctx context.Context, name, p string, offset, limit int) (*ReadResult, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	abs, err := visiblePath(p)
	if err != nil {
		return nil, err
	}
	if offset < 0 || limit < 0 {
		return nil, errors.New("offset and limit must not be negative")
	}
	if limit == 0 {
		limit = DefaultReadLimit
	}
	var out protocol.ReadOut
	if err := m.helperJSON(ctx, slug, &out, "read", abs, strconv.Itoa(offset), strconv.Itoa(limit), strconv.Itoa(maxReadBytes)); err != nil {
		return nil, err
	}
	return &ReadResult{Content: out.Content, Offset: offset, Lines: out.Lines, TotalLines: out.TotalLines, Truncated: offset+out.Lines < out.TotalLines}, nil
}

// Entry is one file system entry listed by Ls.
type Entry struct {
	Path string `json:"path"`
	Type string `json:"type"` // file, dir, symlink, other
	Size int64  `json:"size"`
}

// MaxListed bounds the entries ls and glob return, and the matches of grep.
const MaxListed = 5000

// display shows abs relative to /src when it is inside it.
func display(abs string) string {
	if rel, ok := strings.CutPrefix(abs, Workdir+"/"); ok {
		return rel
	}
	return abs
}

// walk lists the non-hidden entries under root (just its children unless
// recursive), pruning hidden directories.
func (m *Manager) walk(ctx context.Context, slug, root string, recursive bool, filesOnly bool) ([]Entry, bool, error) {
	var got []protocol.LsEntry
	if err := m.helperJSON(ctx, slug, &got, "ls", root, flag(recursive), flag(filesOnly), strconv.Itoa(MaxListed+1)); err != nil {
		return nil, false, err
	}
	entries := make([]Entry, 0, len(got))
	for _, e := range got {
		entries = append(entries, Entry{Path: display(joinUnder(root, e.Path)), Type: e.Type, Size: e.Size})
	}
	truncated := len(entries) > MaxListed
	if truncated {
		entries = entries[:MaxListed]
	}
	return entries, truncated, nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// joinUnder places a path printed by find (or grep) relative to root; an
// absolute one (root was a file) stays as it is.
func joinUnder(root, p string) string {
	if strings.HasPrefix(p, "/") {
		return p
	}
	return path.Join(root, p)
}

// searchRoot resolves the sandbox and the directory ls, glob and grep start
// from (default /src), refusing hidden paths.
func (m *Manager) searchRoot(name, p string) (slug, abs string, err error) {
	if slug, err = m.resolve(name); err != nil {
		return "", "", err
	}
	if p == "" {
		p = Workdir
	}
	abs, err = visiblePath(p)
	return slug, abs, err
}

// Ls lists a directory (recursively on request), leaving hidden entries out.
func (m *Manager) Ls(ctx context.Context, name, p string, recursive bool) ([]Entry, bool, error) {
	slug, abs, err := m.searchRoot(name, p)
	if err != nil {
		return nil, false, err
	}
	return m.walk(ctx, slug, abs, recursive, false)
}

// Glob returns the non-hidden files under p (default /src) whose path
// relative to p matches pattern; "**" matches any number of directories.
func (m *Manager) Glob(ctx context.Context, name, pattern, p string) ([]string, bool, error) {
	slug, abs, err := m.searchRoot(name, p)
	if err != nil {
		return nil, false, err
	}
	re, err := GlobRegexp(pattern)
	if err != nil {
		return nil, false, err
	}
	entries, truncated, err := m.walk(ctx, slug, abs, true, true)
	if err != nil {
		return nil, false, err
	}
	var out []string
	for _, e := range entries {
		rel := strings.TrimPrefix(ResolvePath(e.Path), abs+"/")
		if re.MatchString(rel) {
			out = append(out, e.Path)
		}
	}
	return out, truncated, nil
}

// Match is one line grep found.
type Match struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// Grep searches non-hidden files under p for a regular expression (Go's
// RE2 syntax, the same in every image); include, when set, is a file name
// glob such as "*.go". Binary files are skipped.
func (m *Manager) Grep(ctx context.Context, name, pattern, p, include string) ([]Match, bool, error) {
	if pattern == "" {
		return nil, false, errors.New("pattern is empty")
	}
	slug, abs, err := m.searchRoot(name, p)
	if err != nil {
		return nil, false, err
	}
	if include == "" {
		include = "*"
	}
	var got []protocol.Match
	if err := m.helperJSON(ctx, slug, &got, "grep", abs, pattern, include, strconv.Itoa(MaxListed+1)); err != nil {
		if errors.Is(err, ErrNoSuchFile) {
			return nil, false, fmt.Errorf("%s: %w", p, ErrNoSuchFile)
		}
		return nil, false, fmt.Errorf("grep: %w", err)
	}
	matches := make([]Match, 0, len(got))
	for _, g := range got {
		matches = append(matches, Match{Path: display(joinUnder(abs, g.Path)), Line: g.Line, Text: g.Text})
	}
	truncated := len(matches) > MaxListed
	if truncated {
		matches = matches[:MaxListed]
	}
	return matches, truncated, nil
}

// MilestoneResult says what a milestone squashed.
type MilestoneResult struct {
	Commit   string `json:"commit"`
	Squashed int    `json:"squashed"`
}

func milestoneRef(slug string) string { return "refs/litterbox/" + slug + "/milestone" }

// Milestone squashes every snapshot since the last milestone (or the base)
// into one commit with message; the tree stays the same.
func (m *Manager) Milestone(ctx context.Context, name, message string) (*MilestoneResult, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(message) == "" {
		return nil, errors.New("message is empty")
	}
	unlock, err := m.lock(ctx, slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	n := m.Names(slug)
	tip, err := m.Git.RevParse(ctx, n.Ref)
	if err != nil {
		return nil, err
	}
	if tip == "" {
		return nil, m.missingBranch(ctx, slug)
	}
	lastMilestone, err := m.Git.RevParse(ctx, milestoneRef(slug))
	if err != nil {
		return nil, err
	}
	since := lastMilestone
	if since == "" {
		rec, err := m.store().load(slug)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, &NotFoundError{Name: slug}
		}
		since = rec.Base
	}
	count, err := m.Git.Count(ctx, since, tip)
	if err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, errors.New("no snapshots since the last milestone; nothing to squash")
	}
	tree, err := m.Git.RevParse(ctx, tip+"^{tree}")
	if err != nil {
		return nil, err
	}
	msg := strings.TrimSpace(message) + "\n"
	id, err := m.Git.CommitTree(ctx, commitSpec(tree, since, msg, m.agentIdent(slug), m.committer(ctx, slug)))
	if err != nil {
		return nil, err
	}
	if err := m.Git.UpdateRef(ctx, n.Ref, id, tip, "litterbox milestone"); err != nil {
		return nil, err
	}
	if err := m.Git.UpdateRef(ctx, milestoneRef(slug), id, lastMilestone, "litterbox milestone"); err != nil {
		return nil, err
	}
	if st, err := m.loadSnap(slug); err == nil && st.Tip == tip {
		st.Tip = id
		_ = m.saveSnap(slug, st)
	}
	return &MilestoneResult{Commit: id, Squashed: count}, nil
}

func (m *Manager) missingBranch(ctx context.Context, slug string) error {
	if ok, _ := m.known(ctx, slug); !ok {
		return &NotFoundError{Name: slug}
	}
	return fmt.Errorf("branch %s of sandbox '%s' is gone", m.Names(slug).Branch, slug)
}

// Scan commits whatever changed in the sandbox outside the agent tools (an
// interactive shell), with message "<kind>: <detail>".
func (m *Manager) Scan(ctx context.Context, name, kind, detail string) (*ActResult, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	return m.act(ctx, slug, action{op: protocol.OpScan, message: commitMessage(kind, detail)})
}

func commitSpec(tree, parent, msg string, author, committer gitcli.Ident) gitcli.CommitSpec {
	return gitcli.CommitSpec{Tree: tree, Parents: []string{parent}, Message: msg, Author: author, Committer: committer}
}
