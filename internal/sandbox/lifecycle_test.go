package sandbox

import (
	"testing"

	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

func TestStatusOf(t *testing.T) {
	failed := &layout.Record{Status: layout.FailedSetup}
	for _, tc := range []struct {
		state string
		rec   *layout.Record
		want  string
	}{
		{"running", nil, create.StatusActive},
		{"running", failed, create.StatusFailedSetup},
		{"paused", failed, create.StatusPaused},
		{"exited", nil, create.StatusStopped},
		{"created", nil, create.StatusStopped},
		{"dead", nil, create.StatusError},
		{"removing", nil, create.StatusError},
	} {
		if got := statusOf(dockerState(tc.state), tc.rec); got != tc.want {
			t.Errorf("statusOf(%s) = %s, want %s", tc.state, got, tc.want)
		}
	}
}
