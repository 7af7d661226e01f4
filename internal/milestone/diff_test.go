package milestone

import (
	"reflect"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/result"
)

func TestParseNumstat(t *testing.T) {
	got := parseNumstat("3\t1\tmain.go\x00-\t-\tshot.png\x002\t0\t\x00old name.txt\x00new name.txt\x00")
	want := []result.DiffFile{
		{Path: "main.go", Added: 3, Deleted: 1},
		{Path: "shot.png", Binary: true},
		{Path: "new name.txt", From: "old name.txt", Added: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v", got)
	}
	d := &result.Diff{Files: want}
	if s := d.Stat(); s != " main.go                      | +3 -1\n shot.png                     | binary\n old name.txt => new name.txt | +2 -0\n 3 file(s) changed, 5 insertion(s)(+), 1 deletion(s)(-)\n" {
		t.Errorf("stat:\n%s", s)
	}
}

// The per-file summary lines up its names, as git diff --stat does.
func TestStatAligned(t *testing.T) {
	d := &result.Diff{Files: []result.DiffFile{{Path: "a.go", Added: 1}, {Path: "internal/long/name.go", Deleted: 2}, {Path: "new.go", From: "old.go", Added: 3}, {Path: "logo.png", Binary: true}}}
	want := " a.go                  | +1 -0\n" +
		" internal/long/name.go | +0 -2\n" +
		" old.go => new.go      | +3 -0\n" +
		" logo.png              | binary\n" +
		" 4 file(s) changed, 4 insertion(s)(+), 2 deletion(s)(-)\n"
	if got := d.Stat(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
