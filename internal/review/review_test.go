package review

import (
	"strings"
	"testing"
)

func TestPathsAfterDashes(t *testing.T) {
	for _, tc := range [][2]string{
		{"--stat", "--stat"},
		{"--stat src/", "--stat -- src/"},
		{"src/ a.txt", "-- src/ a.txt"},
		{"--stat -- src/", "--stat -- src/"},
		{"", ""},
	} {
		if got := strings.Join(PathsAfterDashes(strings.Fields(tc[0])), " "); got != tc[1] {
			t.Errorf("%q -> %q, want %q", tc[0], got, tc[1])
		}
	}
}

func TestResumeIndex(t *testing.T) {
	c := []commitTree{{"c1", "A"}, {"c2", "B"}, {"c3", "C"}, {"c4", "B"}, {"c5", "D"}}
	for _, tc := range []struct {
		tree string
		want int
	}{
		{"A", 0},  // applied at c1: take c2..c5
		{"B", 3},  // the agent went back to B later: resume at the newest
		{"D", 4},  // the tip: nothing new
		{"X", -1}, // a milestone squashed across the applied point
	} {
		if got := resumeIndex(c, tc.tree); got != tc.want {
			t.Errorf("resume at tree %s: %d, want %d", tc.tree, got, tc.want)
		}
	}
	if got := resumeIndex(nil, "A"); got != -1 {
		t.Errorf("empty branch: %d", got)
	}
}

func TestCheckOutcome(t *testing.T) {
	blob := func(id string) entry { return entry{Mode: "100644", ID: id} }
	gone := entry{Mode: "000000", ID: "0000"}
	reviewed := map[string]entry{"app.py": blob("new"), "old.txt": gone, "tool.sh": {Mode: "100755", ID: "t"}}
	for _, tc := range []struct {
		name    string
		drifted map[string]bool
		applied map[string]entry
		bad     string // a word of the error, "" when the outcome is right
	}{
		{"exactly the reviewed change", nil, map[string]entry{"app.py": blob("new"), "old.txt": gone, "tool.sh": {Mode: "100755", ID: "t"}}, ""},
		{"a file smuggled in", nil, map[string]entry{"app.py": blob("new"), "old.txt": gone, "tool.sh": {Mode: "100755", ID: "t"}, ".envrc": blob("evil")}, ".envrc"},
		{"wrong content", nil, map[string]entry{"app.py": blob("other"), "old.txt": gone, "tool.sh": {Mode: "100755", ID: "t"}}, "app.py"},
		{"executable bit lost", nil, map[string]entry{"app.py": blob("new"), "old.txt": gone, "tool.sh": blob("t")}, "tool.sh"},
		{"a reviewed delete left out", nil, map[string]entry{"app.py": blob("new"), "tool.sh": {Mode: "100755", ID: "t"}}, "old.txt"},
		{"nothing applied", nil, nil, "not as"},
		{"a path the host changed too is merged", map[string]bool{"app.py": true}, map[string]entry{"app.py": blob("merged"), "old.txt": gone, "tool.sh": {Mode: "100755", ID: "t"}}, ""},
		{"the host already had the change (an empty pick)", map[string]bool{"app.py": true}, map[string]entry{"old.txt": gone, "tool.sh": {Mode: "100755", ID: "t"}}, ""},
		{"a drifted path does not open other paths", map[string]bool{"app.py": true}, map[string]entry{"app.py": blob("merged"), "old.txt": gone, "tool.sh": {Mode: "100755", ID: "t"}, "x": blob("x")}, "\"x\""},
	} {
		err := checkOutcome(reviewed, tc.drifted, tc.applied)
		switch {
		case tc.bad == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
			t.Errorf("%s: %v, want an error naming %s", tc.name, err, tc.bad)
		}
	}
}

func TestParseRaw(t *testing.T) {
	out := ":100644 100755 aaaa bbbb M\x00dir/a file\x00:000000 100644 0000 cccc A\x00new\nline\x00:100644 000000 dddd 0000 D\x00gone\x00"
	got, err := parseRaw(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]entry{"dir/a file": {"100755", "bbbb"}, "new\nline": {"100644", "cccc"}, "gone": {"000000", "0000"}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for p, e := range want {
		if got[p] != e {
			t.Errorf("%q: %v, want %v", p, got[p], e)
		}
	}
	if got, err := parseRaw(""); err != nil || len(got) != 0 {
		t.Errorf("empty: %v %v", got, err)
	}
	if _, err := parseRaw("garbage\x00x\x00"); err == nil {
		t.Error("garbage parsed")
	}
}

func TestCheckPickArgs(t *testing.T) {
	for _, ok := range [][]string{nil, {"--signoff"}, {"-x", "-Xours"}} {
		if err := checkPickArgs(ok); err != nil {
			t.Errorf("%v refused: %v", ok, err)
		}
	}
	for _, bad := range [][]string{{"-n"}, {"--signoff", "--no-commit"}, {"-e"}} {
		if err := checkPickArgs(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
