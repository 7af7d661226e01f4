package result

import "testing"

// The per-file summary lines up its names, as git diff --stat does.
func TestStatAligned(t *testing.T) {
	d := &Diff{Files: []DiffFile{{Path: "a.go", Added: 1}, {Path: "internal/long/name.go", Deleted: 2}, {Path: "new.go", From: "old.go", Added: 3}, {Path: "logo.png", Binary: true}}}
	want := " a.go                  | +1 -0\n" +
		" internal/long/name.go | +0 -2\n" +
		" old.go => new.go      | +3 -0\n" +
		" logo.png              | binary\n" +
		" 4 file(s) changed, 4 insertion(s)(+), 2 deletion(s)(-)\n"
	if got := d.Stat(); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
