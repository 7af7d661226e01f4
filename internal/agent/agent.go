// Package agent is what an agent does in a sandbox: the conversation with
// the sandbox's helper that runs a command or changes files and commits the
// change before the call returns, the file tools, uploads and downloads,
// exec and run sessions. Create, the lifecycle and a sandbox's services
// (internal/create, internal/sandbox, internal/servicectl) build on it; it
// builds on the host repository (internal/hostrepo).
package agent

import (
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// Agent acts in the sandboxes of one repository.
type Agent struct {
	Repo *hostrepo.Repo

	// Helper is the sandbox helper binary create delivers, found by
	// preflight.
	Helper *helperbin.Binary
	// helperSource, when set, replaces the lookup of the helper binary
	// (replay tests need one id whatever the build).
	helperSource func() (*helperbin.Binary, error)
	// chans, when set (KeepChannels), are the channels calls go over.
	chans *channels
}
