package sandbox

import (
	"context"

	"github.com/litterbox-dev/litterbox/internal/box"
)

// recreator is a provider whose Start makes the container anew (a
// Kubernetes pod): its processes and everything outside its volume are
// gone, the helper included, so the helper is delivered again, and a pause
// stops the sandbox rather than freezing it.
type recreator interface{ Recreates() bool }

// recreates says whether p is a recreator.
func recreates(p box.Provider) bool {
	r, ok := p.(recreator)
	return ok && r.Recreates()
}

// storageTeller is a provider that says where a new sandbox's /src lives
// (a Kubernetes claim, or an emptyDir), for create's notes.
type storageTeller interface {
	Storage(ctx context.Context) string
}
