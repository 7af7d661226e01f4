// Package unidiff applies a unified diff of one file, as agents write them:
// hunks found by their context (nearby when line numbers are off), the
// file created or deleted, and a diff that does not apply changes nothing.
package unidiff

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// FilePatch is a unified diff of one file.
type FilePatch struct {
	Creates bool // old side is /dev/null
	Deletes bool // new side is /dev/null
	Hunks   []Hunk
}

// Hunk is one "@@ -a,b +c,d @@" block; lines keep their "\n" unless the diff
// says "\ No newline at end of file".
type Hunk struct {
	OldStart, OldLines int
	NewStart, NewLines int
	Old, New           []string
	header             string
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@`)

// Parse parses a unified diff touching one file. git's extended
// headers ("diff --git", "index", "new file mode") are accepted and skipped.
func Parse(diff string) (*FilePatch, error) {
	if strings.TrimSpace(diff) == "" {
		return nil, errors.New("diff is empty")
	}
	lines := strings.SplitAfter(diff, "\n")
	fp := &FilePatch{}
	files := 0
	var cur *Hunk
	var lastOld, lastNew bool // did the previous hunk line go to Old / New
	for i := 0; i < len(lines); i++ {
		raw := lines[i]
		line := strings.TrimSuffix(raw, "\n")
		if raw == "" {
			continue
		}
		if cur != nil && (len(cur.Old) < cur.OldLines || len(cur.New) < cur.NewLines) {
			if line == "" {
				line = " " // an empty context line whose space an editor stripped
			}
			switch line[0] {
			case ' ':
				cur.Old = append(cur.Old, line[1:]+"\n")
				cur.New = append(cur.New, line[1:]+"\n")
				lastOld, lastNew = true, true
				continue
			case '-':
				cur.Old = append(cur.Old, line[1:]+"\n")
				lastOld, lastNew = true, false
				continue
			case '+':
				cur.New = append(cur.New, line[1:]+"\n")
				lastOld, lastNew = false, true
				continue
			case '\\':
				noNewline(cur, lastOld, lastNew)
				continue
			}
			return nil, fmt.Errorf("hunk %q ends early: line %d %q is not part of it (check the line counts in the header)", cur.header, i+1, line)
		}
		switch {
		case strings.HasPrefix(line, `\`) && cur != nil:
			noNewline(cur, lastOld, lastNew)
		case strings.HasPrefix(line, "--- "):
			files++
			if files > 1 {
				return nil, errors.New("diff touches more than one file; patch takes one file at a time")
			}
			fp.Creates = strings.HasPrefix(strings.TrimSpace(line[4:]), "/dev/null")
		case strings.HasPrefix(line, "+++ "):
			fp.Deletes = strings.HasPrefix(strings.TrimSpace(line[4:]), "/dev/null")
		case strings.HasPrefix(line, "@@"):
			m := hunkHeader.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("bad hunk header %q", line)
			}
			h := Hunk{header: line}
			h.OldStart, _ = strconv.Atoi(m[1])
			h.OldLines = count(m[2])
			h.NewStart, _ = strconv.Atoi(m[3])
			h.NewLines = count(m[4])
			fp.Hunks = append(fp.Hunks, h)
			cur = &fp.Hunks[len(fp.Hunks)-1]
		case strings.HasPrefix(line, "diff "), strings.HasPrefix(line, "index "), strings.HasPrefix(line, "new file mode"),
			strings.HasPrefix(line, "deleted file mode"), strings.HasPrefix(line, "old mode"), strings.HasPrefix(line, "new mode"),
			strings.HasPrefix(line, "similarity"), strings.HasPrefix(line, "Index: "), strings.HasPrefix(line, "==="):
		default:
			if cur != nil {
				return nil, fmt.Errorf("unexpected line %d after hunk %q: %q", i+1, cur.header, line)
			}
			// Text before the first header (a commit message) is allowed.
		}
	}
	if len(fp.Hunks) == 0 {
		return nil, errors.New("diff has no hunks (@@ -a,b +c,d @@)")
	}
	for _, h := range fp.Hunks {
		if len(h.Old) != h.OldLines || len(h.New) != h.NewLines {
			return nil, fmt.Errorf("hunk %q has %d old and %d new lines, its header says %d and %d", h.header, len(h.Old), len(h.New), h.OldLines, h.NewLines)
		}
	}
	return fp, nil
}

func count(s string) int {
	if s == "" {
		return 1
	}
	n, _ := strconv.Atoi(s)
	return n
}

func noNewline(h *Hunk, old, new bool) {
	if old && len(h.Old) > 0 {
		h.Old[len(h.Old)-1] = strings.TrimSuffix(h.Old[len(h.Old)-1], "\n")
	}
	if new && len(h.New) > 0 {
		h.New[len(h.New)-1] = strings.TrimSuffix(h.New[len(h.New)-1], "\n")
	}
}

// Apply applies the patch to content (exists says whether the file exists).
// Hunks must match exactly; each may sit at another line than its header says
// (the nearest match wins), as with patch(1) without fuzz.
func (fp *FilePatch) Apply(content []byte, exists bool) ([]byte, error) {
	if fp.Creates && exists && len(content) > 0 {
		return nil, errors.New("the diff creates the file, but it already exists")
	}
	if !exists && !fp.Creates {
		for _, h := range fp.Hunks {
			if len(h.Old) > 0 {
				return nil, errors.New("no such file (a diff that creates a file starts with --- /dev/null)")
			}
		}
	}
	lines := strings.SplitAfter(string(content), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var out []string
	pos := 0 // next line of content not yet copied
	shift := 0
	for i, h := range fp.Hunks {
		want := h.OldStart - 1 + shift
		if len(h.Old) == 0 {
			want = h.OldStart + shift // a pure insertion goes after line OldStart
		}
		at := findHunk(lines, h.Old, pos, want)
		if at < 0 {
			return nil, fmt.Errorf("hunk %d (%s) does not apply: its context and removed lines are not in the file", i+1, h.header)
		}
		out = append(out, lines[pos:at]...)
		out = append(out, h.New...)
		pos = at + len(h.Old)
		shift += len(h.New) - len(h.Old) + (at - want)
	}
	out = append(out, lines[pos:]...)
	result := strings.Join(out, "")
	if fp.Deletes && result != "" {
		return nil, errors.New("the diff deletes the file, but lines would remain")
	}
	return []byte(result), nil
}

// findHunk returns the index in lines, at or after from, where old matches,
// nearest to want; -1 if nowhere.
func findHunk(lines, old []string, from, want int) int {
	matches := func(at int) bool {
		if at < from || at+len(old) > len(lines) {
			return false
		}
		for j, l := range old {
			if lines[at+j] != l {
				return false
			}
		}
		return true
	}
	// A hunk may claim any line number: past the end it is searched for
	// from the end, or the search would run for as long as the number is big.
	want = min(max(want, from), len(lines))
	for d := 0; want-d >= from || want+d <= len(lines); d++ {
		if matches(want - d) {
			return want - d
		}
		if d > 0 && matches(want+d) {
			return want + d
		}
	}
	return -1
}
