//go:build linux

package helper

import (
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// A change is told once it has been still for quiet, or has kept growing
// for most; PID 1 that cannot tell is presumed changed, told every most.
func TestSettler(t *testing.T) {
	t0 := time.Unix(1000, 0)
	none := &protocol.WatchDirty{Valid: true}
	dirs := func(d ...string) *protocol.WatchDirty { return &protocol.WatchDirty{Valid: true, Dirs: d} }
	unknown := &protocol.WatchDirty{}
	type read struct {
		ms  int
		d   *protocol.WatchDirty
		due bool
	}
	cases := []struct {
		name  string
		reads []read
	}{
		{"nothing changed", []read{{0, none, false}, {5000, none, false}, {60000, none, false}}},
		{"still for quiet", []read{{0, dirs("a"), false}, {1000, dirs("a"), false}, {1500, dirs("a"), true}}},
		{"order does not matter", []read{{0, dirs("a", "b"), false}, {1000, dirs("b", "a"), false}, {1500, dirs("a", "b"), true}}},
		{"growing waits", []read{{0, dirs("a"), false}, {1000, dirs("a", "b"), false}, {2000, dirs("a", "b"), false}, {2500, dirs("a", "b"), true}}},
		{"growing for most", []read{{0, dirs("a"), false}, {1000, dirs("a", "b"), false}, {2000, dirs("a", "b", "c"), false}, {3000, dirs("a", "b", "c", "d"), false}, {4000, dirs("a", "e"), true}}},
		{"a change undone starts again", []read{{0, dirs("a"), false}, {1000, none, false}, {2000, dirs("a"), false}, {3400, dirs("a"), false}, {3500, dirs("a"), true}}},
		{"unknown: every most", []read{{0, unknown, false}, {3000, unknown, false}, {3999, unknown, false}, {4000, unknown, true}}},
	}
	for _, tc := range cases {
		s := settler{quiet: 1500 * time.Millisecond, most: 4 * time.Second}
		for _, r := range tc.reads {
			if got := s.due(t0.Add(time.Duration(r.ms)*time.Millisecond), r.d); got != r.due {
				t.Errorf("%s: at %d ms due = %v, want %v", tc.name, r.ms, got, r.due)
			}
		}
	}
}
