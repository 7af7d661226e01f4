package present

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/audit"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// AuditHeader heads the lines of AuditLine.
var AuditHeader = strings.TrimRight(fmt.Sprintf(auditFormat, "TIME", "SANDBOX", "TOOL", "TOOK", "RESULT", "COMMIT", "CALL"), " ")

// auditFormat lays out an audit line in 70 columns before the call's
// summary, which has the rest (10 of 80, more on a wider terminal): the
// tool's column fits the longest tool name, sandbox-milestone.
const auditFormat = "%-14s %-12s %-17s %5s %-8s %-8s %s"

// summaryArgs are the arguments that say what a call was about, by
// preference: the first one a call has is its summary.
var summaryArgs = []string{"command", "path", "pattern", "message", "name", "base_ref", "port"}

// AuditLine is one call of the audit log on one line, for a person: when,
// the sandbox, the tool, how long, how it ended, its commit and what it
// was about. Everything an agent chose is made inert and cut short, so a
// call never takes more than its line.
func AuditLine(e audit.Entry) string {
	return auditLine(e.Time, e.Sandbox, e.Tool, took(e.DurationMS), ending(e), commit(e), summary(e))
}

// AuditRunning is the line of a call that has started and not ended, as a
// sandbox's lock holder describes it ("bash: make test").
func AuditRunning(slug string, h layout.Holder) string {
	tool, what, _ := strings.Cut(h.Call, ": ")
	if tool == "" {
		tool = "call"
	}
	return auditLine(h.Since, slug, tool, "", "running", "", what)
}

func auditLine(t time.Time, slug, tool, took, result, commit, what string) string {
	if commit == "" {
		commit = "-"
	}
	line := fmt.Sprintf(auditFormat, t.Local().Format("01-02 15:04:05"),
		cell(slug, 12), cell(tool, 17), took, result, commit, agenttext.Inert(agenttext.Elide(agenttext.FirstLine(what), 200)))
	return strings.TrimRight(line, " ")
}

// cell is s made inert and cut to about n columns.
func cell(s string, n int) string {
	if len(s) > n {
		s = agenttext.Elide(s, n-3)
	}
	return agenttext.Inert(s)
}

// took is a duration in the fewest characters that keep its size: 84ms,
// 2.1s, 95s, 12m.
func took(ms int64) string {
	switch d := time.Duration(ms) * time.Millisecond; {
	case d < time.Second:
		return fmt.Sprintf("%dms", ms)
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < 100*time.Second:
		return fmt.Sprintf("%.0fs", d.Seconds())
	default:
		return fmt.Sprintf("%.0fm", d.Minutes())
	}
}

func ending(e audit.Entry) string {
	switch {
	case e.Status == audit.StatusStarted:
		return "started"
	case e.Status == audit.StatusError && e.ExitCode == nil:
		return "error"
	case e.ExitCode != nil:
		return fmt.Sprintf("exit %d", *e.ExitCode)
	}
	return "ok"
}

func commit(e audit.Entry) string {
	switch {
	case e.Snapshot != "":
		return short(e.Snapshot)
	case len(e.Commits) > 0:
		// A run session's last: -v lists them all.
		return short(e.Commits[len(e.Commits)-1])
	}
	return ""
}

func short(id string) string { return id[:min(8, len(id))] }

// summary is what the call was about (its command, path or pattern), with
// its error, and the egress proxy's refusals and injections, after it.
func summary(e audit.Entry) string {
	var parts []string
	for _, k := range summaryArgs {
		if v, ok := e.Arguments[k]; ok {
			parts = append(parts, argText(v))
			break
		}
	}
	if e.Error != "" {
		parts = append(parts, "error: "+agenttext.FirstLine(e.Error))
	}
	if n := total(e.Refused); n > 0 {
		parts = append(parts, fmt.Sprintf("%d refused by the egress proxy (%s)", n, strings.Join(slices.Sorted(maps.Keys(e.Refused)), ", ")))
	}
	if n := total(e.Injected); n > 0 {
		parts = append(parts, fmt.Sprintf("%d injected (%s)", n, strings.Join(slices.Sorted(maps.Keys(e.Injected)), ", ")))
	}
	return strings.Join(parts, "; ")
}

// argText is an argument as text: a string as it is, a long one the log
// kept the head of as that head.
func argText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case map[string]any:
		if head, ok := v["head"].(string); ok {
			return head
		}
	}
	return fmt.Sprint(v)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
