// Package box is the seam between Litterbox and a container runtime: the
// Provider interface the core drives, the neutral types it speaks (a box's
// spec, an exec, a state, a summary), the capabilities that tell runtimes
// apart, and the failure kinds every provider maps its CLI's errors onto.
// dockercli (Docker and Podman) and kubecli (Kubernetes) implement it; the
// core imports this package and never a provider.
package box

import (
	"context"
	"io"

	"github.com/litterbox-dev/litterbox/runner"
)

// Provider is what the sandbox core needs from a container runtime. A box
// is one sandbox's container (or pod), named by the core.
type Provider interface {
	Create(ctx context.Context, spec Spec) (string, error)
	Exec(ctx context.Context, box string, spec ExecSpec, s Streams) (runner.Result, error)
	CopyIn(ctx context.Context, box, dir string, tar io.Reader) error
	Pause(ctx context.Context, box string) error
	Unpause(ctx context.Context, box string) error
	Start(ctx context.Context, box string) error
	Remove(ctx context.Context, box string) error
	RemoveVolume(ctx context.Context, volume string) error
	CreateVolume(ctx context.Context, name string, labels map[string]string) error
	Volumes(ctx context.Context, filters map[string]string) ([]string, error)
	CopyOut(ctx context.Context, box, path string, w io.Writer) error
	Inspect(ctx context.Context, box string) (Inspection, error)
	VolumeLabels(ctx context.Context, volume string) (map[string]string, error)
	List(ctx context.Context, filters map[string]string, labels []string) ([]Summary, error)
	// Endpoint is the engine's address (a socket, tcp://host:port, ...).
	Endpoint(ctx context.Context) (string, error)
	Versions(ctx context.Context) (client, server string, err error)
	// Caps says what this runtime can do.
	Caps() Caps
}
