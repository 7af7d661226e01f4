package box

import (
	"context"
	"io"
	"time"

	"github.com/litterbox-dev/litterbox/runner"
)

// ImageStore is a provider whose engine keeps images: it inspects, pulls,
// reads and builds them before a box is made (Caps.Images).
type ImageStore interface {
	Image(ctx context.Context, image string) (ImageInfo, error)
	Pull(ctx context.Context, image string) error
	ImageEnv(ctx context.Context, image string) (map[string]string, error)
	Build(ctx context.Context, b BuildSpec, out io.Writer) error
}

// ImageLister is an image store that lists the images it has, for a
// missing image's "did you mean".
type ImageLister interface {
	ImageNames(ctx context.Context) ([]string, error)
}

// EgressHost is a provider that runs the egress proxy beside a box
// (Caps.EgressProxy): a tmpfs volume for the shared socket, a network the
// box leaves once its setup is done, and the proxy's log.
type EgressHost interface {
	TmpfsVolume(ctx context.Context, name string, labels map[string]string, uid, gid int) error
	DisconnectNetwork(ctx context.Context, network, box string) error
	Logs(ctx context.Context, box string, since time.Time) ([]byte, error)
}

// VolumeCopier is a provider whose boxes can borrow another's volumes: a
// copy box started attached, for the setup cache and fork
// (Caps.VolumeCopy).
type VolumeCopier interface {
	StartAttached(ctx context.Context, box string, stdin io.Reader) (runner.Result, error)
}

// Overlayer is a provider whose volumes can be made over another volume,
// copy on write (Caps.Overlay): the volume shows lower's files, and what is
// written to it goes to upper, with work the file system's scratch space.
// Nothing written through the volume reaches lower, which many such
// volumes can share.
type Overlayer interface {
	OverlayVolume(ctx context.Context, v Overlay) error
}

// Overlay is a volume made over another: Name shows the files of Lower
// (a volume's directory), with Between's over them when set, and writes
// in Upper and Work (volumes made with it). Each gets Labels.
type Overlay struct {
	Name  string
	Lower VolumeDir
	// Between is a directory of another volume that lies between Lower
	// and the writes, read-only like Lower (a setup cache entry's).
	Between     *VolumeDir
	Upper, Work string
	Labels      map[string]string
}

// VolumeDir is the directory Sub (relative, "" for the root) of Volume.
type VolumeDir struct{ Volume, Sub string }

// Overlays is p's overlayer, nil when it has none.
func Overlays(p Provider) Overlayer {
	if o, ok := p.(Overlayer); ok && p.Caps().Overlay {
		return o
	}
	return nil
}

// IsolationChecker is a provider that can tell, before a box is made,
// whether it runs boxes under an Isolation; one without says so when the
// box fails to start.
type IsolationChecker interface {
	CheckIsolation(ctx context.Context, iso *Isolation) error
}

// HostInfo is a provider whose engine tells its host's memory, the base
// of the sandboxes' memory budget; a cluster's scheduler keeps its own.
type HostInfo interface {
	HostMemory(ctx context.Context) (int64, error)
}

// Images is p's image store. A runtime without one (a cluster, whose
// nodes pull an image when a pod starts, and fail the start when it is
// missing) finds every image, pulls nothing itself, and can neither read
// an image's environment nor build.
func Images(p Provider) ImageStore {
	if s, ok := p.(ImageStore); ok && p.Caps().Images {
		return s
	}
	return noImages{}
}

// Egress is p's egress host; without one, every call says the proxy is
// not supported.
func Egress(p Provider) EgressHost {
	if e, ok := p.(EgressHost); ok && p.Caps().EgressProxy {
		return e
	}
	return noEgress{}
}

// Copier is p's volume copier; without one, a copy is not supported.
func Copier(p Provider) VolumeCopier {
	if c, ok := p.(VolumeCopier); ok && p.Caps().VolumeCopy {
		return c
	}
	return noCopy{}
}

// Claimer is a provider whose boxes can be made ahead of need and
// renamed when claimed (Caps.Pool). Claim gives box pooled the name
// name; of two claims of one box exactly one succeeds, the other failing
// with ErrNotFound, since the box no longer has the name it asked for.
type Claimer interface {
	Claim(ctx context.Context, pooled, name string) error
}

// PoolOf is p's claimer; without one, a claim is not supported.
func PoolOf(p Provider) Claimer {
	if c, ok := p.(Claimer); ok && p.Caps().Pool {
		return c
	}
	return noPool{}
}

type noPool struct{}

func (noPool) Claim(context.Context, string, string) error {
	return Unsupported("a warm pool ([pool] size)")
}

type noImages struct{}

func (noImages) Image(context.Context, string) (ImageInfo, error) { return ImageInfo{}, nil }
func (noImages) Pull(context.Context, string) error               { return nil }
func (noImages) ImageEnv(context.Context, string) (map[string]string, error) {
	return nil, Unsupported("reading an image's environment (${containerEnv:...})")
}
func (noImages) Build(context.Context, BuildSpec, io.Writer) error {
	return Unsupported("[docker] build (build and push the image where the cluster pulls from, then set image)")
}

type noEgress struct{}

func (noEgress) TmpfsVolume(context.Context, string, map[string]string, int, int) error {
	return Unsupported(`network mode "allow" (the egress proxy)`)
}
func (noEgress) DisconnectNetwork(context.Context, string, string) error {
	return Unsupported(`network mode "allow" (the egress proxy)`)
}
func (noEgress) Logs(context.Context, string, time.Time) ([]byte, error) {
	return nil, Unsupported("the egress proxy's log")
}

type noCopy struct{}

func (noCopy) StartAttached(context.Context, string, io.Reader) (runner.Result, error) {
	return runner.Result{}, Unsupported("copying between sandboxes (the setup cache, fork)")
}

// Usage is what a running box takes of its host, as the engine's stats
// report it: CPU as a share of one core (150% is one and a half), memory
// in use.
type Usage struct {
	CPU    string // "12.5%"
	Memory string // "52.1MiB"
}

// StatsReader is a provider whose engine reports, in one call, what each
// running box uses; a cluster without a metrics server has none.
type StatsReader interface {
	Stats(ctx context.Context) (map[string]Usage, error)
}
