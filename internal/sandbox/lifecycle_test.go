package sandbox

import (
	"testing"

	"github.com/litterbox-dev/litterbox/internal/layout"
)

func TestStatusOf(t *testing.T) {
	failed := &layout.Record{Status: layout.FailedSetup}
	for _, tc := range []struct {
		state string
		rec   *layout.Record
		want  string
	}{
		{"running", nil, StatusActive},
		{"running", failed, StatusFailedSetup},
		{"paused", failed, StatusPaused},
		{"exited", nil, StatusStopped},
		{"created", nil, StatusStopped},
		{"dead", nil, StatusError},
		{"removing", nil, StatusError},
	} {
		if got := statusOf(dockerState(tc.state), tc.rec); got != tc.want {
			t.Errorf("statusOf(%s) = %s, want %s", tc.state, got, tc.want)
		}
	}
}
