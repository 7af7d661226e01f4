// Package textedit applies an agent's exact-string edits to a file's text,
// all or nothing, and explains an old string that is missing with the lines
// the agent most likely meant.
package textedit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Op is one replacement of an edit call.
type Op struct {
	Old        string `json:"old_string"`
	New        string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// Max bounds the edits of one call.
const Max = 100

func (e Op) check() error {
	switch {
	case e.Old == "":
		return errors.New("old_string is empty")
	case e.Old == e.New:
		return errors.New("old_string and new_string are the same")
	}
	return nil
}

func editErr(i, n int, err error) error {
	if n == 1 {
		return err
	}
	return fmt.Errorf("edit %d of %d: %w", i+1, n, err)
}

// Check refuses a call's edits before the file is read: none, too many,
// or one whose old string is empty or equal to its new one.
func Check(edits []Op) error {
	if len(edits) == 0 {
		return errors.New("no edits: give old_string and new_string, or edits")
	}
	if len(edits) > Max {
		return fmt.Errorf("%d edits: at most %d in one call", len(edits), Max)
	}
	for i, e := range edits {
		if err := e.check(); err != nil {
			return editErr(i, len(edits), err)
		}
	}
	return nil
}

// Apply applies edits to s in order, each to the result of the one
// before, and counts the replacements; the first that cannot apply fails
// them all.
func Apply(s string, edits []Op) (string, int, error) {
	total := 0
	for i, e := range edits {
		if err := e.check(); err != nil {
			return "", 0, editErr(i, len(edits), err)
		}
		n := strings.Count(s, e.Old)
		switch {
		case n == 0:
			return "", 0, editErr(i, len(edits), notFound(s, e.Old))
		case n > 1 && !e.ReplaceAll:
			return "", 0, editErr(i, len(edits), fmt.Errorf("old_string occurs %d times (at lines %s); give more context to make it unique, or set replace_all", n, occurrences(s, e.Old)))
		}
		s = strings.ReplaceAll(s, e.Old, e.New)
		total += n
	}
	return s, total, nil
}

// occurrences lists the lines where old starts in s, the first ten.
func occurrences(s, old string) string {
	var at []string
	for off := 0; ; {
		i := strings.Index(s[off:], old)
		if i < 0 {
			break
		}
		if len(at) == 10 {
			at = append(at, "...")
			break
		}
		at = append(at, strconv.Itoa(strings.Count(s[:off+i], "\n")+1))
		off += i + len(old)
	}
	return strings.Join(at, ", ")
}

// notFound explains a missing old string with the lines of s it most
// likely meant, numbered as read shows them, so the agent can retry at
// once.
func notFound(s, old string) error {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	want := strings.Split(strings.TrimSuffix(old, "\n"), "\n")
	if s == "" {
		return &MissError{Why: "old_string not found: the file is empty"}
	}
	at, alike := closest(lines, want)
	var why string
	switch alike {
	case sameButSpace:
		why = "old_string not found; these lines match it but for whitespace"
	case similar:
		why = "old_string not found; the closest lines are"
	default:
		why = "old_string not found, and no lines are much like it; the nearest are"
	}
	from, to := max(at-1, 0), min(at+len(want)+1, len(lines), at+maxShown)
	if alike == unlike {
		to = min(max(to, from+maxUnlike), len(lines)) // a glimpse of the file
	}
	var b strings.Builder
	for i := from; i < to; i++ {
		line := lines[i]
		if len(line) > 200 {
			line = line[:200] + "..."
		}
		fmt.Fprintf(&b, "\n%6d\t%s", i+1, line)
	}
	return &MissError{Why: why, Lines: b.String()}
}

// MissError is an old_string not found, with the lines most like it:
// an error of several lines, which callers show whole.
type MissError struct {
	Why   string
	Lines string
}

func (e *MissError) Error() string {
	if e.Lines == "" {
		return e.Why
	}
	return e.Why + ":" + e.Lines
}

// maxShown bounds the lines a not-found error shows; maxUnlike is how many
// it shows at least when no lines are much like old_string.
const (
	maxShown  = 20
	maxUnlike = 5
)

// maxScored bounds the lines closest compares with the first three lines
// of old_string; beyond it only the first is compared.
const maxScored = 20000

// likeness says how much the lines closest found are like old_string.
type likeness int

const (
	unlike likeness = iota
	similar
	sameButSpace
)

// closest returns where in lines the window of len(want) lines most like
// want starts, and how alike it is. Some window is always found, however
// unlike, so that a miss always shows the agent lines of the file.
func closest(lines, want []string) (int, likeness) {
	if len(want) > len(lines) {
		want = want[:len(lines)]
	}
	norm := func(l string) string { return strings.Join(strings.Fields(l), " ") }
	for i := 0; i+len(want) <= len(lines); i++ {
		same := true
		for k := range want {
			if norm(lines[i+k]) != norm(want[k]) {
				same = false
				break
			}
		}
		if same {
			return i, sameButSpace
		}
	}
	// The first few lines of want decide, by the character pairs they share.
	probe := want[:min(len(want), 3)]
	if len(lines) > maxScored {
		probe = want[:1]
	}
	pairs := make([]map[string]int, len(probe))
	for k, l := range probe {
		pairs[k] = bigrams(norm(l))
	}
	best, bestScore := 0, 0.0
	for i := 0; i+len(probe) <= len(lines); i++ {
		score := 0.0
		for k := range probe {
			score += dice(pairs[k], norm(lines[i+k]))
		}
		if score /= float64(len(probe)); score > bestScore {
			best, bestScore = i, score
		}
	}
	if bestScore < 0.3 { // below this nothing is alike enough to call close
		return best, unlike
	}
	return best, similar
}

func bigrams(s string) map[string]int {
	m := map[string]int{}
	for i := 0; i+2 <= len(s); i++ {
		m[s[i:i+2]]++
	}
	return m
}

// dice is the Sørensen–Dice coefficient of the character pairs of a
// (counted) and s.
func dice(a map[string]int, s string) float64 {
	total := 0
	for _, n := range a {
		total += n
	}
	if total == 0 || len(s) < 2 {
		return 0
	}
	seen := map[string]int{}
	shared := 0
	for i := 0; i+2 <= len(s); i++ {
		p := s[i : i+2]
		if seen[p] < a[p] {
			shared++
		}
		seen[p]++
	}
	return 2 * float64(shared) / float64(total+len(s)-1)
}
