package present

import (
	"testing"

	"github.com/litterbox-dev/litterbox/internal/forecast"
)

// watch's MERGE column puts a conflict with the branch first, then one
// with another sandbox, then how far behind the branch the work is.
func TestMergeWord(t *testing.T) {
	for want, f := range map[string]*forecast.Forecast{
		"":         nil,
		"conflict": {Clean: false, ConflictsWith: []string{"b"}, Behind: 3},
		"clash":    {Clean: true, ConflictsWith: []string{"b"}, Behind: 3},
		"3 behind": {Clean: true, Behind: 3, Overlaps: []string{"b"}},
		"clean":    {Clean: true},
	} {
		if got := MergeWord(f); got != want {
			t.Errorf("MergeWord(%+v) = %q, want %q", f, got, want)
		}
	}
}
