package textedit

import (
	"fmt"
	"strings"
	"testing"
)

func one(old, new string, all bool) []Op { return []Op{{Old: old, New: new, ReplaceAll: all}} }

func TestApplyEdits(t *testing.T) {
	if out, n, err := Apply("a b a", one("b", "c", false)); err != nil || n != 1 || out != "a c a" {
		t.Errorf("unique: %q %d %v", out, n, err)
	}
	if _, _, err := Apply("a\nb\na\n", one("a", "c", false)); err == nil || err.Error() != "old_string occurs 2 times (at lines 1, 3); give more context to make it unique, or set replace_all" {
		t.Errorf("ambiguous: %v", err)
	}
	if out, n, err := Apply("a b a", one("a", "c", true)); err != nil || n != 2 || out != "c b c" {
		t.Errorf("all: %q %d %v", out, n, err)
	}
	// In order, each on the result of the one before; all or nothing.
	edits := []Op{{Old: "alpha", New: "beta"}, {Old: "beta", New: "gamma", ReplaceAll: true}, {Old: "x", New: "y"}}
	if out, n, err := Apply("alpha beta x", edits); err != nil || n != 4 || out != "gamma gamma y" {
		t.Errorf("in order: %q %d %v", out, n, err)
	}
	if _, _, err := Apply("alpha beta", edits); err == nil || !strings.HasPrefix(err.Error(), "edit 3 of 3: old_string not found") {
		t.Errorf("third fails: %v", err)
	}
	for _, bad := range []Op{{Old: "", New: "x"}, {Old: "x", New: "x"}} {
		if _, _, err := Apply("x", []Op{bad}); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestNotFoundShowsClosestLines(t *testing.T) {
	file := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n\treturn\n}\n"
	_, _, err := Apply(file, one("func main() {\n    fmt.Println(\"hello\")", "x", false))
	want := "old_string not found; these lines match it but for whitespace:\n     4\t\n     5\tfunc main() {\n     6\t\tfmt.Println(\"hello\")\n     7\t\treturn"
	if err == nil || err.Error() != want {
		t.Errorf("whitespace: got\n%v\nwant\n%s", err, want)
	}
	_, _, err = Apply(file, one("fmt.Printn(\"helo\")", "x", false))
	if err == nil || !strings.HasPrefix(err.Error(), "old_string not found; the closest lines are:\n     5\tfunc main() {\n     6\t\tfmt.Println(\"hello\")\n     7") {
		t.Errorf("typo: %v", err)
	}
	// Nothing alike: the nearest lines all the same, never a bare miss.
	_, _, err = Apply(file, one("zzzz qqqq", "x", false))
	if err == nil || !strings.HasPrefix(err.Error(), "old_string not found, and no lines are much like it; the nearest are:\n     1\tpackage main\n     2\t\n") {
		t.Errorf("nothing alike: %v", err)
	}
	_, _, err = Apply("", one("zzzz", "x", false))
	if err == nil || err.Error() != "old_string not found: the file is empty" {
		t.Errorf("empty file: %v", err)
	}
	// A file past maxScored lines is still searched, by old_string's first
	// line.
	big := strings.Repeat("filler line of text\n", maxScored) + "func handleLogin(w http.ResponseWriter) {\n"
	_, _, err = Apply(big, one("func handleLogn(w http.ResponseWriter) {\n\tx()", "x", false))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%6d\tfunc handleLogin(w http.ResponseWriter) {", maxScored+1)) {
		t.Errorf("a long file: %.300v", err)
	}
}
