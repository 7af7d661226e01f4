package cli

import (
	"os"
	"strings"
)

// Color reports whether output may be colored: only to a terminal that is not
// dumb, and never when NO_COLOR is set to anything (https://no-color.org).
func (e *Env) Color() bool { return ColorAllowed() && IsTerminal(e.Stdout) }

// ColorAllowed is the environment's say in coloring, for tables and logs.
func ColorAllowed() bool { return os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" }

var StatusColors = map[string]string{
	"ok": "32", "active": "32", "running": "32",
	"warn": "33", "paused": "33", "stopped": "33", "creating": "33",
	"fail": "31", "failed-setup": "31", "missing": "31", "error": "31", "exited": "31",
}

// Paint colors a status word for the terminal.
func (e *Env) Paint(word string) string {
	c, ok := StatusColors[word]
	if !ok || !e.Color() {
		return word
	}
	return "\x1b[" + c + "m" + word + "\x1b[0m"
}

// PaintColumn colors the status word that starts at byte offset at of each
// line of an aligned table. Coloring after alignment keeps the columns
// straight: tabwriter would count the escape bytes as width.
func (e *Env) PaintColumn(table string, at int, skip int) string {
	if !e.Color() {
		return table
	}
	lines := strings.SplitAfter(table, "\n")
	for i := skip; i < len(lines); i++ {
		l := lines[i]
		if at >= len(l) || l[at] == ' ' || (at > 0 && l[at-1] != ' ') {
			continue
		}
		end := at
		for end < len(l) && l[end] != ' ' && l[end] != '\n' {
			end++
		}
		lines[i] = l[:at] + e.Paint(l[at:end]) + l[end:]
	}
	return strings.Join(lines, "")
}
