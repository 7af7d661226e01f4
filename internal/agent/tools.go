package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/textedit"
	"github.com/litterbox-dev/litterbox/internal/unidiff"
)

// DefaultBashTimeout is how long a bash call may run unless told otherwise.
const DefaultBashTimeout = 120 * time.Second

// ResolvePath makes p absolute inside the container: relative paths are under
// /src. The result is clean.
func ResolvePath(p string) string {
	if !strings.HasPrefix(p, "/") {
		p = hostrepo.Workdir + "/" + p
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
	// result keeps the head and tail of each stream all the same.
	Output *Output
	// OutputLimit, when set, is how many bytes of each stream the result
	// keeps instead of the config's [agent] output-limit.
	OutputLimit int64
}

// ErrNoShell is Bash's error in a sandbox whose image has no /bin/sh.
var ErrNoShell = errors.New("the image has no /bin/sh, so bash cannot run commands (read, write, edit, patch, ls, glob and grep work)")

// Bash runs a command with sh -c in the sandbox as the sandbox user and
// commits what it changed. On timeout every process it started is killed.
func (m *Agent) Bash(ctx context.Context, name string, o BashOptions) (*result.Act, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, err
	}
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultBashTimeout
	}
	wd := hostrepo.Workdir
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
	res, err := m.act(ctx, slug, Action{Op: protocol.OpRun, Arg: wd, Cmd: o.Command, Timeout: o.Timeout, Output: o.Output, OutputLimit: o.OutputLimit, Kind: kind, Detail: o.Command})
	if err == nil && res.NoShell {
		return nil, fmt.Errorf("sandbox '%s': %w", slug, ErrNoShell)
	}
	return res, err
}

// Check refuses a command no shell can take and a workdir outside reach.
func (o BashOptions) Check() error {
	if strings.TrimSpace(o.Command) == "" {
		return errors.New("command is empty")
	}
	if strings.ContainsRune(o.Command, 0) {
		return errors.New("command contains a NUL byte")
	}
	if o.Workdir != "" {
		if err := checkPath(o.Workdir); err != nil {
			return fmt.Errorf("workdir: %w", err)
		}
	}
	if o.OutputLimit != 0 {
		if err := config.CheckOutputLimit(o.OutputLimit); err != nil {
			return fmt.Errorf("output_limit: %d bytes is outside %d-%d", o.OutputLimit, config.MinOutputLimit, config.MaxOutputLimit)
		}
	}
	return nil
}

// MaxWriteSize bounds the content of one write.
const MaxWriteSize = 64 << 20

// Write replaces (or creates) a file with content and commits the change.
func (m *Agent) Write(ctx context.Context, name, p string, content []byte) (*result.Act, error) {
	slug, abs, err := m.fileTarget(name, p, writablePath, func() error {
		if len(content) > MaxWriteSize {
			return fmt.Errorf("content is %s; write takes at most %s (make large files with bash, and add them to .gitignore)", result.HumanSize(int64(len(content))), result.HumanSize(MaxWriteSize))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m.act(ctx, slug, m.writeAction(abs, p, content, "write"))
}

// fileTarget is the prologue of the tools that change one file: the
// sandbox, and the path as pathOf allows it (writablePath, or readablePath
// for a tool that reads the file first), once check has passed the tool's
// own arguments; a path inside a submodule is refused last, since that
// needs the sandbox's snapshot state.
func (m *Agent) fileTarget(name, p string, pathOf func(string) (string, error), check func() error) (slug, abs string, err error) {
	if slug, err = m.Repo.Resolve(name); err != nil {
		return "", "", err
	}
	if abs, err = pathOf(p); err != nil {
		return "", "", err
	}
	if err = check(); err != nil {
		return "", "", err
	}
	if err = m.OutsideSubmodules(slug, abs); err != nil {
		return "", "", err
	}
	return slug, abs, nil
}

func (m *Agent) writeAction(abs, p string, content []byte, kind string) Action {
	return Action{Op: protocol.OpWrite, Arg: abs, Content: bytes.NewReader(content), Size: int64(len(content)), Message: hostrepo.CommitMessage(kind, p)}
}

func writablePath(p string) (string, error) {
	if err := checkPath(p); err != nil {
		return "", err
	}
	abs := ResolvePath(p)
	if abs == "/" || abs == hostrepo.Workdir {
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

// Edit applies edits to one file in order, all or nothing, in one
// snapshot: each old string exactly once, or everywhere with ReplaceAll. A
// missing or ambiguous old string changes nothing, and the error shows the
// lines the agent most likely meant.
func (m *Agent) Edit(ctx context.Context, name, p string, edits []textedit.Op) (*result.Edit, error) {
	slug, abs, err := m.fileTarget(name, p, readablePath, func() error { return textedit.Check(edits) })
	if err != nil {
		return nil, err
	}
	unlock, err := m.Repo.Lock(layout.WithCall(ctx, "edit: "+p), slug)
	if err != nil {
		return nil, err
	}
	defer unlock()
	a := editAction(abs, p, edits)
	res, err := m.ActLocked(ctx, slug, a)
	if err != nil {
		return nil, err
	}
	if err := editError(abs, p, res, int64(a.Edits.MaxOut)); err != nil {
		return nil, err
	}
	return &result.Edit{Replacements: res.Replaced, Edits: len(edits), Snapshot: res.Snapshot, Between: res.Between, Bounds: res.Bounds}, nil
}

// editAction has the helper read the file, apply the edits and write it
// in the one exec that scans what changed: a read by the host first would
// be a second exec, most of an edit's time.
func editAction(abs, p string, edits []textedit.Op) Action {
	eds := &protocol.Edits{Max: MaxWriteSize}
	for _, e := range edits {
		eds.List = append(eds.List, protocol.Edit{Old: e.Old, New: e.New, All: e.ReplaceAll})
	}
	return Action{Op: protocol.OpEdit, Arg: abs, Edits: eds, Message: hostrepo.CommitMessage("edit", p)}
}

// editError is the error of an edit that stopped (nil when it did not),
// as the tools that read and write report theirs.
func editError(abs, p string, res *result.Act, max int64) error {
	why := strings.TrimSuffix(res.Stderr, "\n")
	switch res.ExitCode {
	case 0:
		return nil
	case protocol.EditMissing:
		return fmt.Errorf("%s: %w", Display(abs), ErrNoSuchFile)
	case protocol.EditReadFailed:
		return &toolError{msg: agenttext.FirstLine(why)}
	case protocol.EditMissed:
		// Several lines: the ones of the file most like old_string.
		return fmt.Errorf("%s: %w", p, &textedit.MissError{Why: why})
	case protocol.EditRefused:
		return fmt.Errorf("%s: %s", p, agenttext.FirstLine(why))
	case protocol.EditOverMax:
		return overMaxFile(int64(min(res.Replaced, 1<<31)), max)
	}
	return fmt.Errorf("writing %s: %s", p, agenttext.FirstLine(why))
}

// Patch applies a unified diff to one file; it may create or delete the
// file. A diff that does not apply changes nothing.
func (m *Agent) Patch(ctx context.Context, name, p, diff string) (*result.Patch, error) {
	var fp *unidiff.FilePatch
	slug, abs, err := m.fileTarget(name, p, readablePath, func() (err error) {
		fp, err = unidiff.Parse(diff)
		return err
	})
	if err != nil {
		return nil, err
	}
	unlock, err := m.Repo.Lock(layout.WithCall(ctx, "edit: "+p), slug)
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
	var a Action
	if fp.Deletes {
		a = Action{Op: protocol.OpRemove, Arg: abs, Message: hostrepo.CommitMessage("patch", p)}
	} else {
		a = m.writeAction(abs, p, out, "patch")
	}
	res, err := m.ActLocked(ctx, slug, a)
	if err != nil {
		return nil, err
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("writing %s: %s", p, agenttext.FirstLine(res.Stderr))
	}
	return &result.Patch{Snapshot: res.Snapshot, Created: !exists, Deleted: fp.Deletes, Between: res.Between, Bounds: res.Bounds}, nil
}

// Scan commits whatever changed in the sandbox outside the agent tools (an
// interactive shell), with message "<kind>: <detail>".
func (m *Agent) Scan(ctx context.Context, name, kind, detail string) (*result.Act, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return nil, err
	}
	return m.act(ctx, slug, Action{Op: protocol.OpScan, Message: hostrepo.CommitMessage(kind, detail)})
}

// OutsideSubmodules refuses a file tool's path inside a submodule: nothing
// there is committed, and an agent must not believe its change is kept.
func (m *Agent) OutsideSubmodules(slug, abs string) error {
	rel, ok := strings.CutPrefix(abs, hostrepo.Workdir+"/")
	if !ok {
		return nil
	}
	st, err := m.Repo.LoadSnap(slug)
	if err != nil {
		return err
	}
	for _, s := range st.Submodules {
		if rel == s || strings.HasPrefix(rel, s+"/") {
			return fmt.Errorf("%s is inside submodule %s; changes there are not committed (change the submodule's own repository instead)", Display(abs), s)
		}
	}
	return nil
}
