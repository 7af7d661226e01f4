//go:build linux

package helper

import (
	"testing"
	"time"
)

// The idle clock waits for the first question (the host still making the
// sandbox), then counts from the last question, call or CPU use.
func TestIdleClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	type read struct {
		s       int
		asked   int64
		cpu     uint64
		calling bool
		idle    bool
	}
	cases := []struct {
		name  string
		reads []read
	}{
		{"nothing asked yet: a slow create is not idle", []read{{5, 0, 0, false, false}, {30, 0, 0, false, false}, {300, 0, 0, false, false}}},
		{"idle from the first question", []read{{30, 1, 0, false, false}, {35, 1, 0, false, false}, {40, 1, 0, false, true}}},
		{"a question resets it", []read{{1, 1, 0, false, false}, {9, 2, 0, false, false}, {18, 2, 0, false, false}, {19, 2, 0, false, true}}},
		{"a running call holds it", []read{{1, 1, 0, true, false}, {50, 1, 0, true, false}, {59, 1, 0, false, false}, {60, 1, 0, false, true}}},
		{"CPU use resets it", []read{{1, 1, 0, false, false}, {9, 1, 7, false, false}, {18, 1, 7, false, false}, {19, 1, 7, false, true}}},
	}
	for _, tc := range cases {
		c := idleClock{idle: 10 * time.Second, last: t0}
		for _, r := range tc.reads {
			if got := c.idleAt(at(r.s), r.asked, r.cpu, r.calling); got != r.idle {
				t.Errorf("%s: at %ds idle = %v, want %v", tc.name, r.s, got, r.idle)
			}
		}
	}
}
