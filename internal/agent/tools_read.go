package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/runner"
)

// The read-only file tools: read, ls, glob and grep, each one exec of the
// sandbox helper, which needs nothing from the image.

// ErrNoSuchFile is returned when a file to read or change does not exist.
var ErrNoSuchFile = errors.New("no such file")

// catFile returns the content of a file in the sandbox, ErrNoSuchFile if it
// does not exist.
func (m *Agent) catFile(ctx context.Context, slug, abs string) ([]byte, error) {
	var out bytes.Buffer
	_, err := m.helperTool(ctx, slug, &out, protocol.CmdCat{Path: abs, Max: MaxWriteSize})
	return out.Bytes(), err
}

// helperTool runs a read-only tool of the helper, its output to stdout.
// The helper's exit codes become ErrNoSuchFile (4) or an error with its
// message; a sandbox its PID 1 stopped for being idle, an IdleError, so
// that the handle starts it again.
func (m *Agent) helperTool(ctx context.Context, slug string, stdout io.Writer, c protocol.Command) (runner.Result, error) {
	res, err := m.helperToolOnce(ctx, slug, stdout, c)
	if idle := m.idleStopped(ctx, slug, err); idle != nil {
		return res, idle
	}
	return res, err
}

func (m *Agent) helperToolOnce(ctx context.Context, slug string, stdout io.Writer, c protocol.Command) (runner.Result, error) {
	h, _, err := m.helperFor(ctx, slug)
	if err != nil {
		return runner.Result{}, err
	}
	var errOut bytes.Buffer
	res, err := m.Repo.Box(slug).Exec(ctx, box.ExecSpec{Cmd: h.Argv(c)},
		box.Streams{Stdout: stdout, Stderr: &errOut})
	if err != nil {
		return res, ExecError(ctx, m.Repo, slug, err)
	}
	switch res.ExitCode {
	case 0:
		return res, nil
	case 4:
		return res, fmt.Errorf("%s: %w", Display(c.Argv()[1]), ErrNoSuchFile)
	default:
		return res, &toolError{msg: agenttext.FirstLine(errOut.String())}
	}
}

// toolError is a helper tool's own refusal (a bad pattern, a directory
// where a file was wanted), as opposed to the sandbox's absence.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// helperJSON runs a helper tool that prints JSON into v.
func (m *Agent) helperJSON(ctx context.Context, slug string, v any, c protocol.Command) error {
	var out bytes.Buffer
	if _, err := m.helperTool(ctx, slug, &out, c); err != nil {
		return err
	}
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		return fmt.Errorf("%s: unexpected answer from the sandbox helper: %w", c.Argv()[0], err)
	}
	return nil
}

// MaxImageRead bounds an image read returns: what multimodal models take.
const MaxImageRead = 5 << 20

// readableImages are the image types read returns as images.
var readableImages = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// BinaryError is a file read refuses: not text, and no image it returns.
type BinaryError struct {
	Path string
	MIME string
	Size int64
}

func (e *BinaryError) Error() string {
	why := "read returns text and PNG, JPEG, GIF and WebP images"
	if readableImages[e.MIME] {
		why = fmt.Sprintf("read returns images up to %s", result.HumanSize(MaxImageRead))
	}
	return fmt.Sprintf("%s is a binary file (%s, %s): %s; inspect it with bash (od, file) or copy it out with litterbox download", e.Path, result.HumanSize(e.Size), e.MIME, why)
}

// DefaultReadLimit is how many lines read returns unless told otherwise.
const DefaultReadLimit = 2000

// MaxReadBytes bounds the lines one read returns.
const MaxReadBytes = 256 << 10

// Read returns limit lines of a file from line offset (0-based). Hidden paths
// are refused.
func (m *Agent) Read(ctx context.Context, name, p string, offset, limit int) (*result.Read, error) {
	slug, err := m.Repo.Resolve(name)
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
	if err := m.helperJSON(ctx, slug, &out, protocol.CmdRead{Path: abs, Offset: offset, Limit: limit, MaxBytes: MaxReadBytes}); err != nil {
		return nil, err
	}
	if out.Binary {
		if !readableImages[out.MIME] || out.Size > MaxImageRead {
			return nil, &BinaryError{Path: p, MIME: out.MIME, Size: out.Size}
		}
		data, err := m.catFile(ctx, slug, abs)
		if err != nil {
			return nil, err
		}
		sec, err := m.Repo.SecretsFor(ctx, slug)
		if err != nil {
			return nil, err
		}
		if name := sec.Holds(data); name != "" {
			return nil, fmt.Errorf("%s holds the value of secret %s, which read never returns; an image cannot be shown masked", p, name)
		}
		return &result.Read{Image: &result.Image{MIME: out.MIME, Size: int64(len(data)), Data: data}}, nil
	}
	sec, err := m.Repo.SecretsFor(ctx, slug)
	if err != nil {
		return nil, err
	}
	truncated := offset+out.Lines < out.TotalLines
	content := sec.Redact(out.Content)
	if truncated || offset > 0 {
		// The lines may begin or end inside a value that spans lines.
		content = sec.RedactPart(out.Content)
	}
	return &result.Read{
		Content: content, Offset: offset, FirstLine: offset + 1, Lines: out.Lines, TotalLines: out.TotalLines,
		Truncated: truncated, CapHit: out.Lines < limit && offset+out.Lines < out.TotalLines,
	}, nil
}

// Numbered renders lines as cat -n does: each with its 1-based number,
// right-aligned in six columns, and a tab.
func Numbered(content string, first int) string {
	var b strings.Builder
	n := first
	for line := range strings.Lines(content) {
		fmt.Fprintf(&b, "%6d\t%s", n, line)
		n++
	}
	return b.String()
}

// MaxListed bounds the entries ls and glob return, and the matches of grep.
const MaxListed = 5000

// Display shows abs relative to /src when it is inside it.
func Display(abs string) string {
	if rel, ok := strings.CutPrefix(abs, hostrepo.Workdir+"/"); ok {
		return rel
	}
	return abs
}

// capped cuts a listing the helper was asked for MaxListed+1 of to
// MaxListed, saying whether it cut.
func capped[T any](s []T) ([]T, bool) {
	if len(s) > MaxListed {
		return s[:MaxListed], true
	}
	return s, false
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
func (m *Agent) searchRoot(name, p string) (slug, abs string, err error) {
	if slug, err = m.Repo.Resolve(name); err != nil {
		return "", "", err
	}
	if p == "" {
		p = hostrepo.Workdir
	}
	abs, err = visiblePath(p)
	return slug, abs, err
}

// Ls lists a directory (recursively on request), leaving hidden entries out.
func (m *Agent) Ls(ctx context.Context, name, p string, recursive bool) ([]result.Entry, bool, error) {
	slug, abs, err := m.searchRoot(name, p)
	if err != nil {
		return nil, false, err
	}
	entries := []result.Entry{}
	if err := m.helperJSON(ctx, slug, &entries, protocol.CmdLs{Path: abs, Recursive: recursive, Max: MaxListed + 1}); err != nil {
		return nil, false, err
	}
	sec, err := m.Repo.SecretsFor(ctx, slug)
	if err != nil {
		return nil, false, err
	}
	for i := range entries {
		entries[i].Path = sec.Redact(Display(joinUnder(abs, entries[i].Path)))
	}
	entries, truncated := capped(entries)
	return entries, truncated, nil
}

// Glob returns the non-hidden files under p (default /src) whose path
// relative to p matches pattern; "**" matches any number of directories.
func (m *Agent) Glob(ctx context.Context, name, pattern, p string) ([]string, bool, error) {
	slug, abs, err := m.searchRoot(name, p)
	if err != nil {
		return nil, false, err
	}
	if !doublestar.ValidatePattern(pattern) || pattern == "" {
		return nil, false, fmt.Errorf("glob %q: not a valid pattern (*, ?, **, [abc], [!abc], {a,b})", pattern)
	}
	entries := []result.Entry{}
	if err := m.helperJSON(ctx, slug, &entries, protocol.CmdGlob{Path: abs, Pattern: pattern, Max: MaxListed + 1}); err != nil {
		return nil, false, err
	}
	sec, err := m.Repo.SecretsFor(ctx, slug)
	if err != nil {
		return nil, false, err
	}
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = sec.Redact(Display(joinUnder(abs, e.Path)))
	}
	out, truncated := capped(out)
	return out, truncated, nil
}

// Grep searches non-hidden files under p for a regular expression (Go's
// RE2 syntax, the same in every image); include, when set, is a file name
// glob such as "*.go". Binary files are skipped.
func (m *Agent) Grep(ctx context.Context, name, pattern, p, include string) ([]result.Match, bool, error) {
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
	matches := []result.Match{}
	if err := m.helperJSON(ctx, slug, &matches, protocol.CmdGrep{Path: abs, Regexp: pattern, Include: include, Max: MaxListed + 1}); err != nil {
		var te *toolError
		switch {
		case errors.Is(err, ErrNoSuchFile):
			return nil, false, fmt.Errorf("%s: %w", p, ErrNoSuchFile)
		case errors.As(err, &te):
			return nil, false, fmt.Errorf("grep: %w", err)
		}
		return nil, false, err
	}
	sec, err := m.Repo.SecretsFor(ctx, slug)
	if err != nil {
		return nil, false, err
	}
	for i := range matches {
		matches[i].Path = sec.Redact(Display(joinUnder(abs, matches[i].Path)))
		matches[i].Text = sec.RedactPart(matches[i].Text) // a line may lie inside a value of several lines
	}
	matches, truncated := capped(matches)
	return matches, truncated, nil
}
