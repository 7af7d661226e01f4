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
