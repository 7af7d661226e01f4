// Package watch is `litterbox watch`: a live view of a repository's
// sandboxes (or every repository's), one row each, with what drives each,
// the call it runs, its last commit and what it takes of the host, and
// keys that act on the selected one. The view reads only what Litterbox
// already writes (records, locks, the audit log, the branch) and the
// engine's stats, once per refresh for all sandboxes together; it changes
// nothing without a key press.
package watch

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
)

// Row is one sandbox as the view shows it.
type Row struct {
	Name string
	Repo string // set with --all-repos
	// Status is list's: active, paused, stopped, stopped (idle), ...
	Status string
	// Owner is who drives it: an MCP client and its server's process, a
	// run session's command, or nobody ("").
	Owner string
	// Call is the call running now ("bash: make test"), since CallSince.
	Call      string
	CallSince time.Time
	// LastCommit is when the branch last moved; zero when never.
	LastCommit time.Time
	Ahead      *int
	// CPU and Memory are the engine's stats; empty when it has none.
	CPU, Memory string
	// Refused counts what the egress proxy refused.
	Refused int
	// Merge is how the sandbox's work would meet the host's branch, in a
	// word ("clean", "3 behind", "clash", "conflict"); "" when unknown.
	Merge string
}

// column is one column of the table: its heading, its least width, its
// share of the width left over, and its cell for a row.
type column struct {
	head  string
	min   int
	grow  int
	right bool
	// wide: shown only in a view of wideView columns or more.
	wide bool
	cell func(r Row, now time.Time) string
}

// wideView is the least width that shows the wide columns: 80 columns
// hold the others at their least widths.
const wideView = 100

var columns = []column{
	{head: "NAME", min: 10, grow: 1, cell: func(r Row, _ time.Time) string { return r.Name }},
	{head: "STATUS", min: 7, cell: func(r Row, _ time.Time) string { return shortStatus(r.Status) }},
	{head: "OWNER", min: 10, grow: 1, cell: func(r Row, _ time.Time) string { return orDash(r.Owner) }},
	{head: "CALL", min: 20, grow: 3, cell: func(r Row, now time.Time) string {
		if r.Call == "" {
			return "-"
		}
		return Age(now.Sub(r.CallSince)) + " " + r.Call
	}},
	{head: "LAST", min: 4, right: true, cell: func(r Row, now time.Time) string {
		if r.LastCommit.IsZero() {
			return "-"
		}
		return Age(now.Sub(r.LastCommit))
	}},
	{head: "AHEAD", min: 5, right: true, cell: func(r Row, _ time.Time) string {
		if r.Ahead == nil {
			return "-"
		}
		return strconv.Itoa(*r.Ahead)
	}},
	{head: "CPU", min: 6, right: true, cell: func(r Row, _ time.Time) string { return orDash(r.CPU) }},
	{head: "MEM", min: 7, right: true, cell: func(r Row, _ time.Time) string { return orDash(r.Memory) }},
	{head: "NET", min: 3, right: true, cell: func(r Row, _ time.Time) string {
		if r.Refused == 0 {
			return "-"
		}
		return strconv.Itoa(r.Refused)
	}},
	{head: "MERGE", min: 8, wide: true, cell: func(r Row, _ time.Time) string { return orDash(r.Merge) }},
}

// shown are the columns a view width columns wide shows.
func shown(width int) []column {
	var out []column
	for _, c := range columns {
		if !c.wide || width >= wideView {
			out = append(out, c)
		}
	}
	return out
}

// shortStatus fits list's statuses in the column: "stopped (idle)" is
// idle, "failed-setup" failed.
func shortStatus(s string) string {
	switch s {
	case "stopped (idle)":
		return "idle"
	case "failed-setup":
		return "failed"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Age is a duration in at most four characters: 9s, 42s, 3m, 5h, 12d.
func Age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// widths gives each column its least width, then shares what is left of
// width among the columns that grow.
func widths(columns []column, width int) []int {
	w := make([]int, len(columns))
	used, shares := len(columns)-1, 0 // the spaces between columns
	for i, c := range columns {
		w[i] = c.min
		used += c.min
		shares += c.grow
	}
	if spare := width - used; spare > 0 && shares > 0 {
		for i, c := range columns {
			w[i] += spare * c.grow / shares
		}
	}
	return w
}

// Lines renders rows as the table's heading and one line per row, each
// cell made inert and cut to its column, in width columns (80 at least).
func Lines(rows []Row, width int, now time.Time) (head string, lines []string) {
	width = max(width, 80)
	columns := shown(width)
	w := widths(columns, width)
	cells := make([]string, len(columns))
	for i, c := range columns {
		cells[i] = c.head
	}
	head = join(columns, cells, w)
	for _, r := range rows {
		for i, c := range columns {
			cells[i] = c.cell(r, now)
		}
		lines = append(lines, join(columns, cells, w))
	}
	return head, lines
}

func join(columns []column, cells []string, w []int) string {
	var b strings.Builder
	for i, s := range cells {
		if i > 0 {
			b.WriteByte(' ')
		}
		s = fit(agenttext.Inert(agenttext.FirstLine(s)), w[i])
		pad := strings.Repeat(" ", w[i]-len([]rune(s)))
		if columns[i].right {
			b.WriteString(pad + s)
		} else {
			b.WriteString(s + pad)
		}
	}
	return strings.TrimRight(b.String(), " ")
}

// fit cuts s to n runes, its end marked by "…".
func fit(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Frame is the whole table as plain text, for --once and for an output
// that is not a terminal: a title, the heading and the rows.
func Frame(title string, rows []Row, width int, now time.Time) string {
	var b strings.Builder
	b.WriteString(title + "\n")
	head, lines := Lines(rows, width, now)
	b.WriteString(head + "\n")
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if len(rows) == 0 {
		b.WriteString("(no sandboxes)\n")
	}
	return b.String()
}
