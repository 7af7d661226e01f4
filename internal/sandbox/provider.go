package sandbox

import (
	"context"
	"io"
	"time"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/kubecli"
	"github.com/litterbox-dev/litterbox/runner"
)

// Provider is what the sandbox core needs from a container runtime. dockercli
// satisfies it for docker and podman; another runtime is another package that
// satisfies it, not a change to the core.
type Provider interface {
	Create(ctx context.Context, spec dockercli.ContainerSpec) (string, error)
	Exec(ctx context.Context, container string, spec dockercli.ExecSpec, s dockercli.Streams) (runner.Result, error)
	CopyIn(ctx context.Context, container, dir string, tar io.Reader) error
	Pause(ctx context.Context, container string) error
	Unpause(ctx context.Context, container string) error
	Start(ctx context.Context, container string) error
	Remove(ctx context.Context, container string) error
	RemoveVolume(ctx context.Context, volume string) error
	CreateVolume(ctx context.Context, name string, labels map[string]string) error
	Volumes(ctx context.Context, filters map[string]string) ([]string, error)
	StartAttached(ctx context.Context, container string, stdin io.Reader) (runner.Result, error)
	Build(ctx context.Context, b dockercli.BuildSpec, out io.Writer) error
	CopyOut(ctx context.Context, container, path string, w io.Writer) error
	ImageEnv(ctx context.Context, image string) (map[string]string, error)
	TmpfsVolume(ctx context.Context, name string, labels map[string]string, uid, gid int) error
	DisconnectNetwork(ctx context.Context, network, container string) error
	Logs(ctx context.Context, container string, since time.Time) ([]byte, error)
	Inspect(ctx context.Context, container string) (dockercli.Inspection, error)
	VolumeLabels(ctx context.Context, volume string) (map[string]string, error)
	List(ctx context.Context, filters map[string]string, labels []string) ([]dockercli.Container, error)
	// Endpoint is the engine's address (a socket, tcp://host:port, ...).
	Endpoint(ctx context.Context) (string, error)
	Versions(ctx context.Context) (client, server string, err error)
	Image(ctx context.Context, image string) (dockercli.ImageInfo, error)
	Pull(ctx context.Context, image string) error
}

var (
	_ Provider = (*dockercli.Client)(nil)
	_ Provider = (*kubecli.Client)(nil)
)

// recreator is a provider whose Start makes the container anew (a
// Kubernetes pod): its processes and everything outside its volume are
// gone, the helper included, so the helper is delivered again, and a pause
// stops the sandbox rather than freezing it.
type recreator interface{ Recreates() bool }

// recreates says whether p is a recreator.
func recreates(p Provider) bool {
	r, ok := p.(recreator)
	return ok && r.Recreates()
}

// storageTeller is a provider that says where a new sandbox's /src lives
// (a Kubernetes claim, or an emptyDir), for create's notes.
type storageTeller interface {
	Storage(ctx context.Context) string
}
