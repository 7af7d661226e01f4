// Package dockercli is a typed client for the docker command line (and CLIs
// compatible with it, such as podman). Argument vectors are built by pure
// functions; methods run them through a runner.Runner and classify failures.
package dockercli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

// Client is a box.Provider.
var _ box.Provider = (*Client)(nil)

// Client runs one docker-compatible binary.
type Client struct {
	Bin    string
	Flavor Flavor
	// Global options go before every subcommand: `--context NAME` or
	// `--host URL` choose a non-default engine, visibly in every logged line.
	Global []string
	Runner runner.Runner
	// flags are the --runtime-flag options Podman's starts of a container
	// need (gVisor's, see box.Isolation), by name, for the containers this
	// client made; the others' come from their LabelRuntimeFlags.
	flags sync.Map
}

// LabelRuntimeFlags keeps, as JSON, the runtime flags every Podman start
// of a container needs: Podman keeps the runtime, not its flags.
const LabelRuntimeFlags = "dev.litterbox.runtime-flags"

// New returns a client for bin ("docker", "podman").
func New(bin string, r runner.Runner) *Client {
	return &Client{Bin: bin, Flavor: FlavorOf(bin), Runner: r}
}

func (c *Client) run(ctx context.Context, cmd runner.Cmd) (runner.Result, error) {
	res, err := c.Runner.Run(ctx, c.cmd(cmd))
	return res, Classify(err)
}

func (c *Client) cmd(cmd runner.Cmd) runner.Cmd {
	cmd.Name = c.Bin
	if len(c.Global) > 0 {
		cmd.Args = append(slices.Clone(c.Global), cmd.Args...)
	}
	return cmd
}

func (c *Client) args(ctx context.Context, args ...string) (runner.Result, error) {
	return c.run(ctx, runner.Cmd{Args: args})
}

// Caps: an engine freezes containers, keeps images, runs the egress proxy beside a
// sandbox, lets a container borrow another's volumes, and renames one.
func (c *Client) Caps() box.Caps {
	return box.Caps{Freeze: true, Images: true, EgressProxy: true, VolumeCopy: true, Pool: true, IDs: true, Overlay: true}
}

// Claim renames the pooled container to name. The engine renames by the
// old name under its lock, so a second claim of the same container finds
// no container of that name.
func (c *Client) Claim(ctx context.Context, pooled, name string) error {
	_, err := c.args(ctx, "rename", pooled, name)
	return err
}

// Run creates and starts a container, returning its ID.
func (c *Client) Run(ctx context.Context, spec box.Spec) (string, error) {
	if c.Flavor == Podman {
		spec.Ulimits = podmanUlimits(spec.Ulimits)
	}
	spec, flags := c.withFlags(spec)
	res, err := c.args(ctx, append(flags, RunArgs(spec, c.Flavor)...)...)
	return strings.TrimSpace(string(res.Stdout)), err
}

// Exec runs a command in a container. A non-zero exit of the command is
// returned as the Result's ExitCode with a nil error; err is reserved for
// failures to run it (no such container, engine down).
func (c *Client) Exec(ctx context.Context, container string, spec box.ExecSpec, s box.Streams) (runner.Result, error) {
	cmd := c.cmd(runner.Cmd{Args: ExecArgs(container, spec), Secrets: envPairs(spec.Secrets), Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr, OwnGroup: spec.OwnGroup, StdinKey: spec.StdinKey})
	if sh := spec.Shown; sh != nil {
		cmd.Shown = &runner.Shown{Cmd: c.cmd(runner.Cmd{Args: ExecArgs(container, sh.Spec)}), Input: sh.Input, HasInput: sh.HasInput, Note: sh.Note}
	}
	if cr := spec.Carried; cr != nil {
		cmd.Carried = &runner.Result{ExitCode: cr.ExitCode, Duration: cr.Took}
	}
	res, err := c.Runner.Run(ctx, cmd)
	if err == nil {
		return res, nil
	}
	// The command's own non-zero exit is a result, not an error; its stderr
	// must not be mistaken for the engine's ("... is not running").
	if ee, ok := runner.AsExit(err); ok && !execFailure(ee) {
		return ee.Result, nil
	}
	return res, Classify(err)
}

func envPairs(m map[string]string) []string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	return kv
}

// execFailure tells the engine's own refusal (no such container, paused,
// engine down) from the command's exit status. The CLI exits 1 for both, so
// the shape of stderr decides: exactly one line in the engine's wording.
func execFailure(ee *runner.ExitError) bool {
	msg := strings.TrimSpace(string(ee.Result.Stderr))
	if strings.Contains(msg, "\n") || len(ee.Result.Stdout) > 0 {
		return false
	}
	for _, p := range []string{"Error response from daemon:", "Error: ", "Cannot connect to the Docker daemon", "error during connect"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// CopyIn extracts the tar stream r into dir inside the container.
func (c *Client) CopyIn(ctx context.Context, container, dir string, r io.Reader) error {
	_, err := c.run(ctx, runner.Cmd{Args: CopyInArgs(container, dir), Stdin: r})
	return err
}

// CopyOut writes a tar of path in the container (running or not) to w.
func (c *Client) CopyOut(ctx context.Context, container, path string, w io.Writer) error {
	_, err := c.run(ctx, runner.Cmd{Args: []string{"cp", container + ":" + path, "-"}, Stdout: w})
	return err
}

// ImageEnv is the environment the image gives its containers.
func (c *Client) ImageEnv(ctx context.Context, image string) (map[string]string, error) {
	res, err := c.args(ctx, "image", "inspect", "--format", "{{json .Config.Env}}", image)
	if err != nil {
		return nil, err
	}
	var pairs []string
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &pairs); err != nil {
		return nil, fmt.Errorf("cannot read docker image inspect output %q: %w", res.Stdout, err)
	}
	env := map[string]string{}
	for _, p := range pairs {
		if k, v, ok := strings.Cut(p, "="); ok {
			env[k] = v
		}
	}
	return env, nil
}

// Pause freezes every process in the container.
func (c *Client) Pause(ctx context.Context, container string) error {
	_, err := c.args(ctx, "pause", container)
	return err
}

// Unpause thaws a paused container.
func (c *Client) Unpause(ctx context.Context, container string) error {
	_, err := c.args(ctx, "unpause", container)
	return err
}

// Start starts a stopped container.
func (c *Client) Start(ctx context.Context, container string) error {
	_, err := c.args(ctx, append(c.startFlags(ctx, container), "start", container)...)
	return err
}

// withFlags labels a Podman container with the runtime flags its starts
// need, and says them for the first start.
func (c *Client) withFlags(spec box.Spec) (box.Spec, []string) {
	if c.Flavor != Podman || spec.Isolation == nil || len(spec.Isolation.Flags) == 0 {
		return spec, nil
	}
	spec.Labels = maps.Clone(spec.Labels)
	if spec.Labels == nil {
		spec.Labels = map[string]string{}
	}
	data, _ := json.Marshal(spec.Isolation.Flags)
	spec.Labels[LabelRuntimeFlags] = string(data)
	c.flags.Store(spec.Name, spec.Isolation.Flags)
	return spec, runtimeFlags(spec.Isolation.Flags)
}

// startFlags are the global options a Podman start of container needs.
func (c *Client) startFlags(ctx context.Context, container string) []string {
	if c.Flavor != Podman {
		return nil
	}
	if f, ok := c.flags.Load(container); ok {
		return runtimeFlags(f.([]string))
	}
	res, err := c.args(ctx, "inspect", "--format", `{{index .Config.Labels "`+LabelRuntimeFlags+`"}}`, container)
	var flags []string
	if err != nil || json.Unmarshal(bytes.TrimSpace(res.Stdout), &flags) != nil {
		return nil // a container of the default runtime, or none: start says
	}
	return runtimeFlags(flags)
}

func runtimeFlags(flags []string) []string {
	var a []string
	for _, f := range flags {
		a = append(a, "--runtime-flag", f)
	}
	return a
}

// Remove force-removes a container, running or not, with its anonymous
// volumes.
func (c *Client) Remove(ctx context.Context, container string) error {
	_, err := c.args(ctx, "rm", "-f", "-v", container)
	// Podman's rm -f stops the container first and exits 2 ("paused or
	// running") when it has not ended by the time it looks again after the
	// kill, as a gVisor container under load did here; a second rm, once
	// it has ended, removes it.
	if ee, ok := runner.AsExit(err); ok && c.Flavor == Podman && ee.Result.ExitCode == 2 {
		_, err = c.args(ctx, "rm", "-f", "-v", container)
	}
	return err
}

// TmpfsVolume makes a named volume held in memory (the local driver's
// tmpfs), owned by uid:gid, that several containers can mount: nothing in
// it reaches a disk.
func (c *Client) TmpfsVolume(ctx context.Context, name string, labels map[string]string, uid, gid int) error {
	a := []string{"volume", "create", "--driver", "local", "--opt", "type=tmpfs", "--opt", "device=tmpfs",
		"--opt", fmt.Sprintf("o=size=1m,uid=%d,gid=%d,mode=0755", uid, gid)}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		a = append(a, "--label", k+"="+labels[k])
	}
	_, err := c.args(ctx, append(a, name)...)
	return err
}

// CreateVolume makes a named volume on the engine's default driver.
// Creating a name that exists succeeds and changes nothing, so callers that
// need it new must own the name some other way.
func (c *Client) CreateVolume(ctx context.Context, name string, labels map[string]string) error {
	a := []string{"volume", "create"}
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		a = append(a, "--label", k+"="+labels[k])
	}
	_, err := c.args(ctx, append(a, name)...)
	return err
}

// OverlayVolume makes v.Name an overlay mount of the local driver over
// v.Lower's directory (and v.Between's), with v.Upper and v.Work (made here, side by side)
// holding what is written: the engine mounts it, as root, when a
// container that uses it starts, and mounts the lower read-only. Nothing
// runs in a container, so it needs no privilege of Litterbox's.
func (c *Client) OverlayVolume(ctx context.Context, v box.Overlay) error {
	errs := make(chan error, 2)
	for _, name := range []string{v.Upper, v.Work} {
		go func() { errs <- c.CreateVolume(ctx, name, v.Labels) }()
	}
	if err := errors.Join(<-errs, <-errs); err != nil {
		return err
	}
	names := []string{v.Lower.Volume, v.Upper, v.Work}
	if v.Between != nil {
		names = append(names, v.Between.Volume)
	}
	dirs, err := c.volumeDirs(ctx, names...)
	if err != nil {
		return err
	}
	sub, err := overlaySub(v.Lower.Sub)
	if err != nil {
		return err
	}
	lower := dirs[0] + sub
	if b := v.Between; b != nil {
		// overlayfs reads lowerdir top first: the middle layer, then the tree.
		if sub, err = overlaySub(b.Sub); err != nil {
			return err
		}
		lower = dirs[3] + sub + ":" + lower
	}
	a := []string{"volume", "create", "--driver", "local", "--opt", "type=overlay", "--opt", "device=overlay",
		"--opt", "o=lowerdir=" + lower + ",upperdir=" + dirs[1] + ",workdir=" + dirs[2]}
	for _, k := range slices.Sorted(maps.Keys(v.Labels)) {
		a = append(a, "--label", k+"="+v.Labels[k])
	}
	_, err = c.args(ctx, append(a, v.Name)...)
	return err
}

// overlaySub is sub as a suffix of a volume's directory in an overlay's
// options: "" for the root, else "/" and a clean relative path whose
// characters cannot break the options.
func overlaySub(sub string) (string, error) {
	if sub == "" {
		return "", nil
	}
	if path.IsAbs(sub) || path.Clean(sub) != sub || sub == ".." || strings.HasPrefix(sub, "../") || strings.ContainsAny(sub, ",:\\") {
		return "", fmt.Errorf("directory %q of a volume cannot be an overlay's layer", sub)
	}
	return "/" + sub, nil
}

// volumeDirs are where the engine keeps the named volumes' files, as its
// own file system names them: the directories an overlay is made of. A
// directory whose name would break the mount's options is refused.
func (c *Client) volumeDirs(ctx context.Context, names ...string) ([]string, error) {
	res, err := c.args(ctx, append([]string{"volume", "inspect", "--format", "{{.Mountpoint}}"}, names...)...)
	if err != nil {
		return nil, err
	}
	dirs := strings.Fields(string(res.Stdout))
	if len(dirs) != len(names) {
		return nil, fmt.Errorf("docker volume inspect gave %d directories for %d volumes: %q", len(dirs), len(names), res.Stdout)
	}
	for _, d := range dirs {
		if !strings.HasPrefix(d, "/") || strings.ContainsAny(d, ",:\\") {
			return nil, fmt.Errorf("volume directory %q cannot be an overlay's layer", d)
		}
	}
	return dirs, nil
}

// Volumes lists the names of the volumes carrying every label of filters.
// Docker's volume ls takes a volume with every label filter given;
// Podman's with any of them, so there each label is asked for alone and
// the answers intersected.
func (c *Client) Volumes(ctx context.Context, filters map[string]string) ([]string, error) {
	keys := slices.Sorted(maps.Keys(filters))
	if c.Flavor != Podman || len(keys) < 2 {
		return c.volumes(ctx, filters, keys)
	}
	var out []string
	for i, k := range keys {
		vols, err := c.volumes(ctx, filters, []string{k})
		if err != nil {
			return nil, err
		}
		if i == 0 {
			out = vols
			continue
		}
		out = slices.DeleteFunc(out, func(v string) bool { return !slices.Contains(vols, v) })
	}
	return out, nil
}

// volumes runs one volume ls with the label filters of keys.
func (c *Client) volumes(ctx context.Context, filters map[string]string, keys []string) ([]string, error) {
	a := []string{"volume", "ls", "--quiet"}
	for _, k := range keys {
		a = append(a, "--filter", "label="+k+"="+filters[k])
	}
	res, err := c.args(ctx, a...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(res.Stdout)), nil
}

// StartAttached starts a created container and waits for it to end,
// returning what it printed; a non-zero exit is a *runner.ExitError.
// stdin, when set, is the container's standard input.
func (c *Client) StartAttached(ctx context.Context, container string, stdin io.Reader) (runner.Result, error) {
	if stdin == nil {
		return c.args(ctx, "start", "--attach", container)
	}
	// The container must have been created with OpenStdin.
	return c.run(ctx, runner.Cmd{Args: []string{"start", "--attach", "--interactive", container}, Stdin: stdin})
}

// RemoveVolume removes a named volume.
func (c *Client) RemoveVolume(ctx context.Context, volume string) error {
	_, err := c.args(ctx, "volume", "rm", volume)
	return err
}

// DisconnectNetwork takes a container off a network; it keeps no other
// way out, and stays off it when restarted.
func (c *Client) DisconnectNetwork(ctx context.Context, network, container string) error {
	_, err := c.args(ctx, "network", "disconnect", network, container)
	return err
}

// Logs returns what the container printed, stdout then stderr, since
// since (all of it when zero).
func (c *Client) Logs(ctx context.Context, container string, since time.Time) ([]byte, error) {
	a := []string{"logs"}
	if !since.IsZero() {
		a = append(a, "--since", fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond()))
	}
	res, err := c.args(ctx, append(a, container)...)
	if err != nil {
		return nil, err
	}
	return append(res.Stdout, res.Stderr...), nil
}

// VolumeLabels returns the labels of a named volume.
func (c *Client) VolumeLabels(ctx context.Context, volume string) (map[string]string, error) {
	res, err := c.args(ctx, "volume", "inspect", "--format", "{{json .Labels}}", volume)
	if err != nil {
		return nil, err
	}
	var labels map[string]string
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &labels); err != nil {
		return nil, fmt.Errorf("cannot read docker volume inspect output %q: %w", res.Stdout, err)
	}
	return labels, nil
}

// Inspect returns the state and labels of one container.
func (c *Client) Inspect(ctx context.Context, container string) (box.Inspection, error) {
	res, err := c.args(ctx, "inspect", "--type", "container", "--format", `{"state":{{json .State.Status}},"exit":{{.State.ExitCode}},"labels":{{json .Config.Labels}}}`, container)
	if err != nil {
		return box.Inspection{}, err
	}
	var in box.Inspection
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &in); err != nil {
		return box.Inspection{}, fmt.Errorf("cannot read docker inspect output %q: %w", res.Stdout, err)
	}
	return in, nil
}

// List returns every container (running or not) carrying the filter labels,
// with the values of the labels asked for, in one call.
func (c *Client) List(ctx context.Context, filters map[string]string, labels []string) ([]box.Summary, error) {
	res, err := c.args(ctx, PsArgs(filters, labels, c.Flavor)...)
	if err != nil {
		return nil, err
	}
	if c.Flavor == Podman {
		return parsePodmanPs(res.Stdout, labels)
	}
	return parsePs(res.Stdout)
}

// podmanContainer is the part of `podman ps --format json` list reads.
type podmanContainer struct {
	ID      string            `json:"Id"`
	Names   []string          `json:"Names"`
	State   string            `json:"State"`
	Status  string            `json:"Status"`
	Created int64             `json:"Created"`
	Labels  map[string]string `json:"Labels"`
}

func parsePodmanPs(out []byte, labels []string) ([]box.Summary, error) {
	var pcs []podmanContainer
	if err := json.Unmarshal(out, &pcs); err != nil {
		return nil, fmt.Errorf("cannot read podman ps output: %w", err)
	}
	list := make([]box.Summary, 0, len(pcs))
	for _, p := range pcs {
		c := box.Summary{ID: p.ID, State: box.State(p.State), Status: p.Status, Labels: map[string]string{}}
		if len(p.Names) > 0 {
			c.Name = p.Names[0]
		}
		if p.Created > 0 {
			c.Created = time.Unix(p.Created, 0).Format("2006-01-02 15:04:05 -0700 MST")
		}
		for _, l := range labels {
			c.Labels[l] = p.Labels[l]
		}
		list = append(list, c)
	}
	return list, nil
}

func parsePs(out []byte) ([]box.Summary, error) {
	var list []box.Summary
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var ct box.Summary
		if err := json.Unmarshal(line, &ct); err != nil {
			return nil, fmt.Errorf("cannot read docker ps output %q: %w", line, err)
		}
		list = append(list, ct)
	}
	return list, sc.Err()
}

// Versions returns the CLI's version and the engine's. The CLI's is known
// even when the engine is unreachable (err then says why). Podman without a
// remote engine has no server: the CLI is the engine.
func (c *Client) Versions(ctx context.Context) (client, server string, err error) {
	format := "{{.Client.Version}}|{{.Server.Version}}"
	if c.Flavor == Podman {
		format = "{{.Client.Version}}|{{if .Server}}{{.Server.Version}}{{end}}"
	}
	res, err := c.args(ctx, "version", "--format", format)
	client, server, _ = strings.Cut(strings.TrimSpace(string(res.Stdout)), "|")
	if c.Flavor == Podman && server == "" && err == nil {
		server = client
	}
	return client, server, err
}

// Pull fetches image from its registry.
func (c *Client) Pull(ctx context.Context, image string) error {
	_, err := c.args(ctx, "pull", "--quiet", image)
	return err
}

// ImageNames lists the images the engine has, as repository:tag (none
// for an image with no name).
func (c *Client) ImageNames(ctx context.Context) ([]string, error) {
	res, err := c.args(ctx, "image", "ls", "--format", "{{.Repository}}:{{.Tag}}")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(res.Stdout), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.Contains(l, "<none>") {
			out = append(out, l)
		}
	}
	return out, nil
}

// Endpoint returns the address of the engine the client talks to, such as
// unix:///var/run/docker.sock or tcp://build-box:2376.
func (c *Client) Endpoint(ctx context.Context) (string, error) {
	for i, a := range c.Global {
		if (a == "--host" || a == "-H") && i+1 < len(c.Global) {
			return c.Global[i+1], nil
		}
		if h, ok := strings.CutPrefix(a, "--host="); ok {
			return h, nil
		}
	}
	if c.Flavor == Podman {
		if h := os.Getenv("CONTAINER_HOST"); h != "" {
			return h, nil
		}
		return "unix:///run/podman/podman.sock", nil
	}
	if h := os.Getenv("DOCKER_HOST"); h != "" && !slices.Contains(c.Global, "--context") {
		return h, nil
	}
	res, err := c.args(ctx, "context", "inspect", "--format", "{{.Endpoints.docker.Host}}")
	return strings.TrimSpace(string(res.Stdout)), err
}

// Image inspects an image once for its platform and id, or says
// box.ErrImageNotFound.
func (c *Client) Image(ctx context.Context, image string) (box.ImageInfo, error) {
	res, err := c.args(ctx, "image", "inspect", "--format", "{{.Os}}/{{.Architecture}} {{.Id}}", image)
	if err != nil {
		return box.ImageInfo{}, err
	}
	platform, id, _ := strings.Cut(strings.TrimSpace(string(res.Stdout)), " ")
	return box.ImageInfo{Platform: platform, ID: id}, nil
}

// BuildArgs is the argv of b's build, its context read from stdin.
func BuildArgs(b box.BuildSpec) []string {
	// --force-rm: a failed step's container goes too, not only a good build's.
	a := []string{"build", "--force-rm", "--file", b.Dockerfile, "--tag", b.Tag}
	if b.Network != "" {
		a = append(a, "--network", b.Network)
	}
	if b.Target != "" {
		a = append(a, "--target", b.Target)
	}
	for _, k := range slices.Sorted(maps.Keys(b.Args)) {
		a = append(a, "--build-arg", k+"="+b.Args[k])
	}
	for _, k := range slices.Sorted(maps.Keys(b.Labels)) {
		a = append(a, "--label", k+"="+b.Labels[k])
	}
	return append(a, "-")
}

// Build builds an image, its output (both streams) going to out as it is
// produced.
func (c *Client) Build(ctx context.Context, b box.BuildSpec, out io.Writer) error {
	_, err := c.run(ctx, runner.Cmd{Args: BuildArgs(b), Stdin: b.Context, Stdout: out, Stderr: out})
	return err
}

// Create makes a container without starting it, returning its ID.
func (c *Client) Create(ctx context.Context, spec box.Spec) (string, error) {
	if c.Flavor == Podman {
		spec.Ulimits = podmanUlimits(spec.Ulimits)
	}
	spec, _ = c.withFlags(spec)
	res, err := c.args(ctx, CreateArgs(spec, c.Flavor)...)
	return strings.TrimSpace(string(res.Stdout)), err
}

// CheckIsolation refuses, before anything is made, a gVisor runtime the
// engine does not know: Docker lists its registered runtimes. Podman takes
// a runtime by path or by its containers.conf name and says at the start.
func (c *Client) CheckIsolation(ctx context.Context, iso *box.Isolation) error {
	if c.Flavor == Podman {
		if iso.HostSockets && !box.AllowsHostSockets(iso.Flags) {
			return errHostSockets(`add "host-uds=open" to [docker] gvisor-flags`)
		}
		if iso.Network && box.NoNetwork(iso.Flags) {
			return errNoNetwork(`[docker] gvisor-flags has "network=none"`)
		}
		return nil
	}
	if len(iso.Flags) > 0 {
		return fmt.Errorf(`isolation "gvisor": Docker takes runsc's flags from its daemon.json (runtimes.%s.runtimeArgs), not from gvisor-flags; remove gvisor-flags from the config`, iso.Runtime)
	}
	res, err := c.args(ctx, "info", "--format", "{{json .Runtimes}}")
	if err != nil {
		return err
	}
	var runtimes map[string]struct {
		Args []string `json:"runtimeArgs"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(res.Stdout), &runtimes); err != nil {
		return fmt.Errorf("docker info: unexpected runtimes %q", res.Stdout)
	}
	rt, ok := runtimes[iso.Runtime]
	if !ok {
		return fmt.Errorf(`isolation "gvisor": this Docker engine has no runtime %q (it has %s); register gVisor in /etc/docker/daemon.json ({"runtimes": {%q: {"path": "/usr/bin/runsc"}}}) and reload the engine (kill -HUP $(pidof dockerd)), or name its runtime in [docker] gvisor-runtime`,
			iso.Runtime, strings.Join(slices.Sorted(maps.Keys(runtimes)), ", "), iso.Runtime)
	}
	if iso.HostSockets && !box.AllowsHostSockets(rt.Args) {
		return errHostSockets(fmt.Sprintf(`add "--host-uds=open" to runtimes.%s.runtimeArgs in /etc/docker/daemon.json and reload the engine`, iso.Runtime))
	}
	if iso.Network && box.NoNetwork(rt.Args) {
		return errNoNetwork(fmt.Sprintf(`this engine runs %s with --network=none (runtimes.%s.runtimeArgs in /etc/docker/daemon.json)`, iso.Runtime, iso.Runtime))
	}
	return nil
}

// errNoNetwork refuses a network under a runsc whose own is off.
func errNoNetwork(why string) error {
	return fmt.Errorf(`a network (or published ports) under isolation "gvisor": %s, so the sandbox would have its loopback only; use network "none" or mode "allow", or isolation "container"`, why)
}

// errHostSockets refuses network mode "allow" under a runsc that may not
// reach the egress proxy's socket, with fix.
func errHostSockets(fix string) error {
	return fmt.Errorf(`network mode "allow" under isolation "gvisor": the sandbox reaches its egress proxy through a unix socket, which runsc allows only with --host-uds=open; %s, or use network "none"`, fix)
}

// HostMemory is the memory of the engine's host, in bytes.
func (c *Client) HostMemory(ctx context.Context) (int64, error) {
	format := "{{.MemTotal}}"
	if c.Flavor == Podman {
		format = "{{.Host.MemTotal}}"
	}
	res, err := c.args(ctx, "info", "--format", format)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(res.Stdout)), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s info: unexpected memory %q", c.Bin, res.Stdout)
	}
	return n, nil
}
