package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/milestone"
	"github.com/litterbox-dev/litterbox/internal/present"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/textedit"
)

func addAgentTools(s *server.MCPServer, h handlers) {
	s.AddTool(gomcp.NewTool("bash", input[bashIn](nil), output[bashOut](), gomcp.WithOpenWorldHintAnnotation(true),
		gomcp.WithDescription("Run a command with sh -c inside the sandbox (busybox sh unless the image has more), as the sandbox user, in /src or workdir. "+
			"Returns exit code, stdout and stderr (each capped at 256 KiB). On timeout every process the command started is killed. "+
			"Processes left running when the command ends are stopped too: start a server or watcher with background: true instead, which returns at once with the service's name and pid and keeps it running across calls (sandbox-service status, logs, stop and restart control it; its file changes are committed by the next call). "+
			"Changes to files git would track are committed to the sandbox branch before this returns."),
		gomcp.WithDestructiveHintAnnotation(true),
	), typed(h.bash))
	s.AddTool(gomcp.NewTool("read", input[readIn](nil), output[result.Read](), gomcp.WithOpenWorldHintAnnotation(false), gomcp.WithIdempotentHintAnnotation(true),
		gomcp.WithDescription("Read lines of a file in the sandbox, each shown as cat -n prints it: its 1-based number, a tab, the line (the numbers are not part of the file). At most 2000 lines and 256 KiB a call; a last line in brackets says how to read on. PNG, JPEG, GIF and WebP files up to 5 MiB come back as images; other binary files are refused with their size and type. Hidden paths (a component starting with '.') are refused."),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.read))
	s.AddTool(gomcp.NewTool("write", input[writeIn](nil), output[writeOut](), gomcp.WithOpenWorldHintAnnotation(false), gomcp.WithIdempotentHintAnnotation(true),
		gomcp.WithDescription(writeDescription),
		gomcp.WithDestructiveHintAnnotation(true),
	), typed(h.write))
	s.AddTool(gomcp.NewTool("patch", input[patchIn](nil), output[patchOut](), gomcp.WithOpenWorldHintAnnotation(false),
		gomcp.WithDescription("Apply a unified diff to one file. The diff may create the file (--- /dev/null) or delete it (+++ /dev/null). A diff that does not apply exactly is an error and changes nothing."),
		gomcp.WithDestructiveHintAnnotation(true),
	), typed(h.patch))
	s.AddTool(gomcp.NewTool("edit", input[editIn](nil), output[editOut](), gomcp.WithOpenWorldHintAnnotation(false),
		gomcp.WithDescription("Replace old_string with new_string in a file; old_string must occur exactly once unless replace_all is true. Or give edits, a list of such replacements applied in order (each to the result of the one before), all or nothing, committed as one snapshot. A missing old_string is an error that shows the file's closest lines, numbered as read shows them; an ambiguous one names the lines where it occurs."),
		gomcp.WithDestructiveHintAnnotation(true),
	), typed(h.edit))
	s.AddTool(gomcp.NewTool("ls", input[lsIn](nil), output[lsOut](), gomcp.WithOpenWorldHintAnnotation(false), gomcp.WithIdempotentHintAnnotation(true),
		gomcp.WithDescription("List a directory of the sandbox (recursively on request), at most 5000 entries (truncated says when there were more). Hidden entries are left out."),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.ls))
	s.AddTool(gomcp.NewTool("glob", input[globIn](nil), output[globOut](), gomcp.WithOpenWorldHintAnnotation(false), gomcp.WithIdempotentHintAnnotation(true),
		gomcp.WithDescription("Find files whose path (relative to path, default /src) matches a glob; ** spans directories, e.g. **/*.go, and {a,b} gives alternatives. At most 5000 paths (truncated says when there were more). Hidden files are left out."),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.glob))
	s.AddTool(gomcp.NewTool("grep", input[grepIn](nil), output[grepOut](), gomcp.WithOpenWorldHintAnnotation(false), gomcp.WithIdempotentHintAnnotation(true),
		gomcp.WithDescription("Search file contents with a regular expression in Go's RE2 syntax (the same in every image), printing path, line number and line of each match, at most 5000 (truncated says when there were more). Binary and hidden files are left out."),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.grep))
	s.AddTool(gomcp.NewTool("sandbox-milestone", input[milestoneIn](nil), output[result.Milestone](), gomcp.WithOpenWorldHintAnnotation(false),
		gomcp.WithDescription("Squash every snapshot commit since the last milestone (or the sandbox's base) into one commit with this message (at most 4096 bytes; a secret's value in it is masked). The files do not change."),
		gomcp.WithDestructiveHintAnnotation(true),
	), typed(h.milestone))
	s.AddTool(gomcp.NewTool("sandbox-ready", input[readyIn](nil), output[sandbox.Review](), gomcp.WithOpenWorldHintAnnotation(false),
		gomcp.WithDescription("Say that this sandbox's work is ready for a person's review, with a summary of what it does and how it was checked. "+
			"sandbox-list then shows it as ready until the next change; if the person rejects it, the reason comes at the head of your next tool result and in sandbox-list."),
		gomcp.WithDestructiveHintAnnotation(false), gomcp.WithIdempotentHintAnnotation(true),
	), typed(h.ready))
	s.AddTool(gomcp.NewTool("sandbox-sync", input[syncIn](nil), output[sandbox.Synced](), gomcp.WithOpenWorldHintAnnotation(false),
		gomcp.WithDescription("Move this sandbox onto the current tip of the person's branch: your commits are replayed on it and /src is brought to the result in place (ignored files, your home and running services stay). "+
			"If your changes conflict with theirs, the files come back with conflict markers (<<<<<<< and the person's branch, their side; =======; your side, then >>>>>>> and your sandbox's branch), committed and listed in the result: resolve them with edit or write. "+
			"Call it when sandbox-list says the sandbox is behind its base or would not merge cleanly."),
		gomcp.WithDestructiveHintAnnotation(true),
	), typed(h.sync))
	s.AddTool(gomcp.NewTool("sandbox-diff", input[diffIn](map[string][]any{"since": {"base", "milestone"}}), output[result.Diff](), gomcp.WithOpenWorldHintAnnotation(false), gomcp.WithIdempotentHintAnnotation(true),
		gomcp.WithDescription("Show what this sandbox's branch changed since its base (what a human will review) or since the last milestone: a per-file summary, then the unified diff, capped at 256 KiB. Reads only; changes nothing."),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), typed(h.diff))
}

func (h handlers) diff(ctx context.Context, _ gomcp.CallToolRequest, in diffIn) (*gomcp.CallToolResult, error) {
	since := in.Since
	if since == "" {
		since = "base"
	}
	d, err := milestone.DiffSince(ctx, h.mgr.Repo, in.Sandbox, since)
	if err != nil {
		return errResult(err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "changes since the %s (%s..%s):\n", d.Since, d.From[:min(12, len(d.From))], d.To[:min(12, len(d.To))])
	if len(d.Files) == 0 {
		b.WriteString("no changes\n")
		return structured(d, b.String()), nil
	}
	b.WriteString(d.Stat())
	b.WriteString("\n")
	b.WriteString(d.Diff)
	if d.Cut > 0 {
		fmt.Fprintf(&b, "[diff truncated: %d more bytes not shown; read the files for the rest]\n", d.Cut)
	}
	return structured(d, b.String()), nil
}

// snapshotValue is a snapshot's commit id for a result, nil (null) when
// the call changed nothing.
func snapshotValue(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}

func snapshotText(id string) string {
	if id == "" {
		return "snapshot: none (nothing git would track changed)"
	}
	return "snapshot: " + id
}

// betweenText is the line naming the snapshot a call made first, of what
// changed since the last call, "" when it made none.
func betweenText(b result.Between) string {
	if b.Commit == "" {
		return ""
	}
	return fmt.Sprintf("changes made since the last call (%d path(s), by a background command or from outside) were committed first: %s\n", b.Paths, b.Commit)
}

// maxTimeout bounds a bash call's timeout, far above any real use and
// below what a time.Duration holds.
const maxTimeout = 7 * 24 * time.Hour

// seconds turns a timeout in seconds into a duration: a tiny positive
// one stays positive (0 means the default), and a huge one is refused
// rather than overflowing into a negative, default-taking duration.
func seconds(s float64) (time.Duration, error) {
	switch {
	case s < 0 || s != s:
		return 0, errors.New("timeout must be a number of seconds, not negative")
	case s > maxTimeout.Seconds():
		return 0, fmt.Errorf("timeout %g s is over the maximum of %g s", s, maxTimeout.Seconds())
	case s > 0:
		return max(time.Duration(s*float64(time.Second)), time.Nanosecond), nil
	}
	return 0, nil
}

func (h handlers) bash(ctx context.Context, req gomcp.CallToolRequest, in bashIn) (*gomcp.CallToolResult, error) {
	timeout, err := seconds(in.Timeout)
	if err != nil {
		return errResult(err), nil
	}
	if in.Background {
		return h.background(ctx, in)
	}
	if in.Name != "" {
		return errResult(errors.New("name is for background commands: set background: true")), nil
	}
	sb, err := h.mgr.Open(in.Sandbox)
	if err != nil {
		return errResult(err), nil
	}
	out, stop := progress(ctx, req)
	res, err := sb.Bash(ctx, agent.BashOptions{Command: in.Command, Workdir: in.Workdir, Timeout: timeout, Output: out, OutputLimit: in.OutputLimit})
	stop()
	if res == nil {
		return errResult(err), nil
	}
	result := bashOut{
		ExitCode: &res.ExitCode, Stdout: &res.Stdout, Stderr: &res.Stderr, TimedOut: &res.TimedOut, Cancelled: &res.Cancelled,
		Truncated: ptr(res.Truncated()), StdoutLog: res.StdoutLog, StderrLog: res.StderrLog, Snapshot: snapshotValue(res.Snapshot), Between: res.Between, Bounds: res.Bounds,
	}
	var b strings.Builder
	fmt.Fprintf(&b, "exit code: %d\n", res.ExitCode)
	if res.TimedOut {
		b.WriteString("timed out: the command and every process it started were killed\n")
	}
	if res.Cancelled {
		b.WriteString("cancelled: the command and every process it started were killed\n")
	}
	section(&b, "stdout", res.Stdout)
	section(&b, "stderr", res.Stderr)
	b.WriteString(betweenText(res.Between) + snapshotText(res.Snapshot) + "\n")
	notes(&b, res.Bounds)
	r := structured(result, b.String())
	if err != nil {
		r.IsError = true
		r.Content = append([]gomcp.Content{gomcp.NewTextContent(oneLine(err))}, r.Content...)
	}
	return r, nil
}

func ptr[T any](v T) *T { return &v }

// background starts a bash command as a service of the agent's own.
func (h handlers) background(ctx context.Context, in bashIn) (*gomcp.CallToolResult, error) {
	st, err := servicectl.Background(ctx, h.mgr.Repo, in.Sandbox, in.Name, agent.BashOptions{Command: in.Command, Workdir: in.Workdir})
	if st == nil {
		return errResult(err), nil
	}
	text := fmt.Sprintf("started in the background: %s\nsandbox-service with service %q shows its status and logs, stops and restarts it\n", st.String(), st.Name)
	r := structured(bashOut{Service: st.Name, State: st.State, PID: st.PID, Log: st.Log}, text)
	if err != nil {
		r.IsError = true
		r.Content = append([]gomcp.Content{gomcp.NewTextContent(oneLine(err))}, r.Content...)
	}
	return r, nil
}

// section shows a stream as the result keeps it (a long one's elided
// middle named inside it).
func section(b *strings.Builder, name, text string) {
	if text == "" {
		return
	}
	fmt.Fprintf(b, "%s:\n%s", name, ensureNL(text))
}

func (h handlers) read(ctx context.Context, _ gomcp.CallToolRequest, in readIn) (*gomcp.CallToolResult, error) {
	sb, err := h.mgr.Open(in.Sandbox)
	if err != nil {
		return errResult(err), nil
	}
	res, err := sb.Read(ctx, in.Path, in.Offset, in.Limit)
	if err != nil {
		return errResult(err), nil
	}
	if img := res.Image; img != nil {
		out := structured(res, fmt.Sprintf("%s: %s, %s\n", in.Path, img.MIME, result.HumanSize(img.Size)))
		out.Content = append(out.Content, gomcp.NewImageContent(base64.StdEncoding.EncodeToString(img.Data), img.MIME))
		return out, nil
	}
	text := agent.Numbered(res.Content, res.FirstLine)
	if res.Truncated {
		why := ""
		if res.CapHit {
			why = fmt.Sprintf(" (at most %s a call)", result.HumanSize(agent.MaxReadBytes))
		}
		text = ensureNL(text) + fmt.Sprintf("[lines %d-%d of %d shown%s; read on with offset %d]\n", res.FirstLine, res.Offset+res.Lines, res.TotalLines, why, res.Offset+res.Lines)
	}
	if res.Lines == 0 && !res.Truncated {
		text = fmt.Sprintf("[no lines at offset %d; the file has %d]\n", res.Offset, res.TotalLines)
	}
	return structured(res, text), nil
}

func (h handlers) write(ctx context.Context, _ gomcp.CallToolRequest, in writeIn) (*gomcp.CallToolResult, error) {
	content := in.Content
	sb, err := h.mgr.Open(in.Sandbox)
	if err != nil {
		return errResult(err), nil
	}
	res, err := sb.Write(ctx, in.Path, []byte(content))
	if err != nil {
		return errResult(err), nil
	}
	if res.ExitCode != 0 {
		return errResult(fmt.Errorf("writing %s: %s", in.Path, strings.TrimSpace(res.Stderr))), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "wrote %d bytes to %s\n%s%s\n", len(content), in.Path, betweenText(res.Between), snapshotText(res.Snapshot))
	notes(&b, res.Bounds)
	return structured(writeOut{Bytes: len(content), Snapshot: snapshotValue(res.Snapshot), Between: res.Between, Bounds: res.Bounds}, b.String()), nil
}

// notes adds to a result's text what its snapshot left out, and the disk
// guard.
func notes(text *strings.Builder, b result.Bounds) {
	for _, n := range b.Notes() {
		text.WriteString(n + "\n")
	}
}

func (h handlers) patch(ctx context.Context, _ gomcp.CallToolRequest, in patchIn) (*gomcp.CallToolResult, error) {
	sb, err := h.mgr.Open(in.Sandbox)
	if err != nil {
		return errResult(err), nil
	}
	res, err := sb.Patch(ctx, in.Path, in.Diff)
	if err != nil {
		return errResult(err), nil
	}
	what := "patched"
	switch {
	case res.Created:
		what = "created"
	case res.Deleted:
		what = "deleted"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s\n%s%s\n", what, in.Path, betweenText(res.Between), snapshotText(res.Snapshot))
	notes(&b, res.Bounds)
	return structured(patchOut{Snapshot: snapshotValue(res.Snapshot), Created: res.Created, Deleted: res.Deleted, Between: res.Between, Bounds: res.Bounds}, b.String()), nil
}

func (h handlers) edit(ctx context.Context, _ gomcp.CallToolRequest, in editIn) (*gomcp.CallToolResult, error) {
	edits, err := in.ops()
	if err != nil {
		return errResult(err), nil
	}
	sb, err := h.mgr.Open(in.Sandbox)
	if err != nil {
		return errResult(err), nil
	}
	res, err := sb.Edit(ctx, in.Path, edits)
	if err != nil {
		return errResult(err), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d replacement(s) in %s\n%s%s\n", res.Replacements, in.Path, betweenText(res.Between), snapshotText(res.Snapshot))
	notes(&b, res.Bounds)
	return structured(editOut{Replacements: res.Replacements, Edits: res.Edits, Snapshot: snapshotValue(res.Snapshot), Between: res.Between, Bounds: res.Bounds}, b.String()), nil
}

// ops are an edit call's replacements: old_string and new_string, or
// edits, not both.
func (in editIn) ops() ([]textedit.Op, error) {
	switch {
	case in.Edits != nil && (in.OldString != nil || in.NewString != nil):
		return nil, errors.New("give old_string and new_string, or edits, not both")
	case in.Edits != nil:
		return *in.Edits, nil
	case in.OldString == nil:
		return nil, errors.New("missing required argument 'old_string' (or give edits)")
	case in.NewString == nil:
		return nil, errors.New("missing required argument 'new_string'")
	}
	return []textedit.Op{{Old: *in.OldString, New: *in.NewString, ReplaceAll: in.ReplaceAll}}, nil
}

func (h handlers) ls(ctx context.Context, _ gomcp.CallToolRequest, in lsIn) (*gomcp.CallToolResult, error) {
	sb, err := h.mgr.Open(in.Sandbox)
	if err != nil {
		return errResult(err), nil
	}
	entries, truncated, err := sb.Ls(ctx, in.Path, in.Recursive)
	if err != nil {
		return errResult(err), nil
	}
	if entries == nil {
		entries = []result.Entry{}
	}
	var b strings.Builder
	for _, e := range entries {
		suffix := ""
		if e.Type == "dir" {
			suffix = "/"
		}
		fmt.Fprintf(&b, "%s%s\t%s\t%d\n", e.Path, suffix, e.Type, e.Size)
	}
	truncNote(&b, truncated)
	return structured(lsOut{Entries: entries, Truncated: truncated}, b.String()), nil
}

func truncNote(b *strings.Builder, truncated bool) {
	if truncated {
		fmt.Fprintf(b, "[truncated at %d entries]\n", agent.MaxListed)
	}
	if b.Len() == 0 {
		b.WriteString("(none)\n")
	}
}

func (h handlers) glob(ctx context.Context, _ gomcp.CallToolRequest, in globIn) (*gomcp.CallToolResult, error) {
	sb, err := h.mgr.Open(in.Sandbox)
	if err != nil {
		return errResult(err), nil
	}
	paths, truncated, err := sb.Glob(ctx, in.Pattern, in.Path)
	if err != nil {
		return errResult(err), nil
	}
	if paths == nil {
		paths = []string{}
	}
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(p + "\n")
	}
	truncNote(&b, truncated)
	return structured(globOut{Paths: paths, Truncated: truncated}, b.String()), nil
}

func (h handlers) grep(ctx context.Context, _ gomcp.CallToolRequest, in grepIn) (*gomcp.CallToolResult, error) {
	sb, err := h.mgr.Open(in.Sandbox)
	if err != nil {
		return errResult(err), nil
	}
	matches, truncated, err := sb.Grep(ctx, in.Pattern, in.Path, in.Include)
	if err != nil {
		return errResult(err), nil
	}
	if matches == nil {
		matches = []result.Match{}
	}
	var b strings.Builder
	for _, m := range matches {
		fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, m.Text)
	}
	truncNote(&b, truncated)
	return structured(grepOut{Matches: matches, Truncated: truncated}, b.String()), nil
}

func (h handlers) milestone(ctx context.Context, _ gomcp.CallToolRequest, in milestoneIn) (*gomcp.CallToolResult, error) {
	res, err := milestone.Make(ctx, h.mgr.Repo, in.Sandbox, in.Message)
	if err != nil {
		return errResult(err), nil
	}
	return structured(res,
		fmt.Sprintf("milestone %s squashes %d snapshot(s)\n", res.Commit, res.Squashed)), nil
}

func (h handlers) sync(ctx context.Context, _ gomcp.CallToolRequest, in syncIn) (*gomcp.CallToolResult, error) {
	res, err := h.mgr.Sync(ctx, in.Sandbox, sandbox.SyncOptions{})
	if err != nil {
		return errResult(err), nil
	}
	text := present.Synced(res) + "\n"
	if len(res.Conflicts) > 0 {
		text += "Resolve the conflict markers in: " + strings.Join(shownAll(res.Conflicts), ", ") + "\n"
	}
	return structured(res, text), nil
}

// shownAll is each of names shown inert.
func shownAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = agenttext.Shown(n)
	}
	return out
}

func (h handlers) ready(ctx context.Context, _ gomcp.CallToolRequest, in readyIn) (*gomcp.CallToolResult, error) {
	if strings.TrimSpace(in.Summary) == "" {
		return errResult(fmt.Errorf("summary is empty: say what the work does and how it was checked")), nil
	}
	res, err := h.mgr.MarkReady(ctx, in.Sandbox, in.Summary)
	if err != nil {
		return errResult(err), nil
	}
	return structured(res, fmt.Sprintf("sandbox '%s' is marked ready for review until its next change; if a person sends it back, the reason comes at the head of your next tool result\n", in.Sandbox)), nil
}

func oneLine(err error) string { return agenttext.FirstLine(err.Error()) }

// writeDescription states the limits write enforces: the repository's
// max-file-size, and MaxWriteSize over any config.
var writeDescription = fmt.Sprintf("Create or replace a file in the sandbox with content (parent directories are made). "+
	"The content may be as large as the repository's [snapshot] max-file-size (%s unless its config says otherwise), and never over %s. "+
	"The change is committed before this returns.", result.HumanSize(config.Default().MaxFileSize), result.HumanSize(agent.MaxWriteSize))
