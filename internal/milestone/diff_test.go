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
