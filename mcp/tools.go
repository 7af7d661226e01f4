package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/sandbox"
)

func sandboxParam() gomcp.ToolOption {
	return gomcp.WithString("sandbox", gomcp.Required(), gomcp.Description("Name of the sandbox (as given to sandbox-create)."))
}

func pathParam(desc string) gomcp.ToolOption {
	return gomcp.WithString("path", gomcp.Required(), gomcp.Description(desc+" Relative paths are under /src; absolute paths are inside the container."))
}

func addAgentTools(s *server.MCPServer, h handlers) {
	s.AddTool(gomcp.NewTool("bash",
		gomcp.WithDescription("Run a command with sh -c inside the sandbox (busybox sh unless the image has more), as the sandbox user, in /src or workdir. "+
			"Returns exit code, stdout and stderr (each capped at 256 KiB). On timeout every process the command started is killed. "+
			"Processes left running when the command ends are stopped too; run servers as services. Changes to files git would track are committed to the sandbox branch before this returns."),
		sandboxParam(),
		gomcp.WithString("command", gomcp.Required(), gomcp.Description("The shell command.")),
		gomcp.WithString("workdir", gomcp.Description("Directory to run in; default /src.")),
		gomcp.WithNumber("timeout", gomcp.Description("Seconds before the command is killed; default 120.")),
		gomcp.WithDestructiveHintAnnotation(true),
	), h.bash)
	s.AddTool(gomcp.NewTool("read",
		gomcp.WithDescription("Read lines of a file in the sandbox. Hidden paths (a component starting with '.') are refused."),
		sandboxParam(), pathParam("File to read."),
		gomcp.WithNumber("offset", gomcp.Description("First line to return, 0-based; default 0.")),
		gomcp.WithNumber("limit", gomcp.Description("How many lines; default 2000.")),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), h.read)
	s.AddTool(gomcp.NewTool("write",
		gomcp.WithDescription("Create or replace a file in the sandbox with content (parent directories are made). The change is committed before this returns."),
		sandboxParam(), pathParam("File to write."),
		gomcp.WithString("content", gomcp.Required(), gomcp.Description("The whole new content.")),
		gomcp.WithDestructiveHintAnnotation(true),
	), h.write)
	s.AddTool(gomcp.NewTool("patch",
		gomcp.WithDescription("Apply a unified diff to one file. The diff may create the file (--- /dev/null) or delete it (+++ /dev/null). A diff that does not apply exactly is an error and changes nothing."),
		sandboxParam(), pathParam("File the diff applies to."),
		gomcp.WithString("diff", gomcp.Required(), gomcp.Description("Unified diff (@@ -a,b +c,d @@ hunks) of that file.")),
		gomcp.WithDestructiveHintAnnotation(true),
	), h.patch)
	s.AddTool(gomcp.NewTool("edit",
		gomcp.WithDescription("Replace old_string with new_string in a file. old_string must occur exactly once unless replace_all is true."),
		sandboxParam(), pathParam("File to edit."),
		gomcp.WithString("old_string", gomcp.Required(), gomcp.Description("Exact text to replace.")),
		gomcp.WithString("new_string", gomcp.Required(), gomcp.Description("Replacement text.")),
		gomcp.WithBoolean("replace_all", gomcp.Description("Replace every occurrence; default false.")),
		gomcp.WithDestructiveHintAnnotation(true),
	), h.edit)
	s.AddTool(gomcp.NewTool("ls",
		gomcp.WithDescription("List a directory of the sandbox (recursively on request). Hidden entries are left out."),
		sandboxParam(), gomcp.WithString("path", gomcp.Description("Directory; default /src.")),
		gomcp.WithBoolean("recursive", gomcp.Description("List the whole tree; default false.")),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), h.ls)
	s.AddTool(gomcp.NewTool("glob",
		gomcp.WithDescription("Find files whose path (relative to path, default /src) matches a glob; ** spans directories, e.g. **/*.go. Hidden files are left out."),
		sandboxParam(),
		gomcp.WithString("pattern", gomcp.Required(), gomcp.Description("Glob pattern.")),
		gomcp.WithString("path", gomcp.Description("Directory to search; default /src.")),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), h.glob)
	s.AddTool(gomcp.NewTool("grep",
		gomcp.WithDescription("Search file contents with a POSIX extended regular expression. Hidden files are left out."),
		sandboxParam(),
		gomcp.WithString("pattern", gomcp.Required(), gomcp.Description("Regular expression (ERE).")),
		gomcp.WithString("path", gomcp.Description("File or directory to search; default /src.")),
		gomcp.WithString("include", gomcp.Description("Only files whose name matches this glob, e.g. *.go.")),
		gomcp.WithReadOnlyHintAnnotation(true), gomcp.WithDestructiveHintAnnotation(false),
	), h.grep)
	s.AddTool(gomcp.NewTool("sandbox-milestone",
		gomcp.WithDescription("Squash every snapshot commit since the last milestone (or the sandbox's base) into one commit with this message. The files do not change."),
		sandboxParam(),
		gomcp.WithString("message", gomcp.Required(), gomcp.Description("Commit message for the squashed work.")),
		gomcp.WithDestructiveHintAnnotation(false),
	), h.milestone)
}

// args reads the required string arguments, or returns the error result.
func args(req gomcp.CallToolRequest, names ...string) ([]string, *gomcp.CallToolResult) {
	out := make([]string, len(names))
	for i, n := range names {
		v, err := req.RequireString(n)
		if err != nil {
			return nil, gomcp.NewToolResultError(fmt.Sprintf("missing required argument '%s'", n))
		}
		out[i] = v
	}
	return out, nil
}

func snapshotValue(id string) any {
	if id == "" {
		return nil
	}
	return id
}

func snapshotText(id string) string {
	if id == "" {
		return "snapshot: none (nothing git would track changed)"
	}
	return "snapshot: " + id
}

func (h handlers) bash(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox", "command")
	if bad != nil {
		return bad, nil
	}
	timeout := req.GetFloat("timeout", 0)
	if timeout < 0 {
		return errResult(errors.New("timeout must not be negative")), nil
	}
	out, stop := progress(ctx, req)
	res, err := h.mgr.Bash(ctx, a[0], sandbox.BashOptions{Command: a[1], Workdir: req.GetString("workdir", ""), Timeout: time.Duration(timeout * float64(time.Second)), Output: out})
	stop()
	if res == nil {
		return errResult(err), nil
	}
	result := map[string]any{
		"exit_code": res.ExitCode, "stdout": res.Stdout, "stderr": res.Stderr,
		"timed_out": res.TimedOut, "cancelled": res.Cancelled, "truncated": res.Truncated(), "snapshot": snapshotValue(res.Snapshot),
	}
	var b strings.Builder
	fmt.Fprintf(&b, "exit code: %d\n", res.ExitCode)
	if res.TimedOut {
		b.WriteString("timed out: the command and every process it started were killed\n")
	}
	if res.Cancelled {
		b.WriteString("cancelled: the command and every process it started were killed\n")
	}
	section(&b, "stdout", res.Stdout, res.StdoutCut)
	section(&b, "stderr", res.Stderr, res.StderrCut)
	b.WriteString(snapshotText(res.Snapshot) + "\n")
	r := structured(result, b.String())
	if err != nil {
		r.IsError = true
		r.Content = append([]gomcp.Content{gomcp.NewTextContent(oneLine(err))}, r.Content...)
	}
	return r, nil
}

func section(b *strings.Builder, name, text string, cut int64) {
	if text == "" && cut == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n%s", name, ensureNL(text))
	if cut > 0 {
		fmt.Fprintf(b, "[%s truncated: %d more bytes not shown]\n", name, cut)
	}
}

func (h handlers) read(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox", "path")
	if bad != nil {
		return bad, nil
	}
	res, err := h.mgr.Read(ctx, a[0], a[1], req.GetInt("offset", 0), req.GetInt("limit", 0))
	if err != nil {
		return errResult(err), nil
	}
	text := res.Content
	if res.Truncated {
		text = ensureNL(text) + fmt.Sprintf("[lines %d-%d of %d shown; use offset to read on]\n", res.Offset+1, res.Offset+res.Lines, res.TotalLines)
	}
	if res.Lines == 0 && !res.Truncated {
		text = fmt.Sprintf("[no lines at offset %d; the file has %d]\n", res.Offset, res.TotalLines)
	}
	return structured(res, text), nil
}

func (h handlers) write(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox", "path", "content")
	if bad != nil {
		return bad, nil
	}
	res, err := h.mgr.Write(ctx, a[0], a[1], []byte(a[2]))
	if err != nil {
		return errResult(err), nil
	}
	if res.ExitCode != 0 {
		return errResult(fmt.Errorf("writing %s: %s", a[1], strings.TrimSpace(res.Stderr))), nil
	}
	return structured(map[string]any{"bytes": len(a[2]), "snapshot": snapshotValue(res.Snapshot)},
		fmt.Sprintf("wrote %d bytes to %s\n%s\n", len(a[2]), a[1], snapshotText(res.Snapshot))), nil
}

func (h handlers) patch(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox", "path", "diff")
	if bad != nil {
		return bad, nil
	}
	res, err := h.mgr.Patch(ctx, a[0], a[1], a[2])
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
	return structured(map[string]any{"snapshot": snapshotValue(res.Snapshot), "created": res.Created, "deleted": res.Deleted},
		fmt.Sprintf("%s %s\n%s\n", what, a[1], snapshotText(res.Snapshot))), nil
}

func (h handlers) edit(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox", "path", "old_string")
	if bad != nil {
		return bad, nil
	}
	newString, err := req.RequireString("new_string")
	if err != nil {
		return errResult(errors.New("missing required argument 'new_string'")), nil
	}
	res, err := h.mgr.Edit(ctx, a[0], a[1], a[2], newString, req.GetBool("replace_all", false))
	if err != nil {
		return errResult(err), nil
	}
	return structured(map[string]any{"replacements": res.Replacements, "snapshot": snapshotValue(res.Snapshot)},
		fmt.Sprintf("%d replacement(s) in %s\n%s\n", res.Replacements, a[1], snapshotText(res.Snapshot))), nil
}

func (h handlers) ls(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox")
	if bad != nil {
		return bad, nil
	}
	entries, truncated, err := h.mgr.Ls(ctx, a[0], req.GetString("path", ""), req.GetBool("recursive", false))
	if err != nil {
		return errResult(err), nil
	}
	if entries == nil {
		entries = []sandbox.Entry{}
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
	return structured(map[string]any{"entries": entries, "truncated": truncated}, b.String()), nil
}

func truncNote(b *strings.Builder, truncated bool) {
	if truncated {
		fmt.Fprintf(b, "[truncated at %d entries]\n", sandbox.MaxListed)
	}
	if b.Len() == 0 {
		b.WriteString("(none)\n")
	}
}

func (h handlers) glob(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox", "pattern")
	if bad != nil {
		return bad, nil
	}
	paths, truncated, err := h.mgr.Glob(ctx, a[0], a[1], req.GetString("path", ""))
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
	return structured(map[string]any{"paths": paths, "truncated": truncated}, b.String()), nil
}

func (h handlers) grep(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox", "pattern")
	if bad != nil {
		return bad, nil
	}
	matches, truncated, err := h.mgr.Grep(ctx, a[0], a[1], req.GetString("path", ""), req.GetString("include", ""))
	if err != nil {
		return errResult(err), nil
	}
	if matches == nil {
		matches = []sandbox.Match{}
	}
	var b strings.Builder
	for _, m := range matches {
		fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, m.Text)
	}
	truncNote(&b, truncated)
	return structured(map[string]any{"matches": matches, "truncated": truncated}, b.String()), nil
}

func (h handlers) milestone(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
	a, bad := args(req, "sandbox", "message")
	if bad != nil {
		return bad, nil
	}
	res, err := h.mgr.Milestone(ctx, a[0], a[1])
	if err != nil {
		return errResult(err), nil
	}
	return structured(map[string]any{"commit": res.Commit, "squashed": res.Squashed},
		fmt.Sprintf("milestone %s squashes %d snapshot(s)\n", res.Commit, res.Squashed)), nil
}

func oneLine(err error) string { return firstLineOf(err.Error()) }
