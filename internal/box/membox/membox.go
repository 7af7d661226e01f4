//go:build linux

// Package membox is a box.Provider without an engine, for tests: each box
// is a directory standing for its filesystem root, and an exec of the
// sandbox helper runs the real helper in this process on that directory
// (helper.RunIn). Boxes, volumes and their states live in memory; the
// provider has none of the optional capabilities (no images, no egress
// proxy, no volume copies, no pool), as a minimal runtime would.
//
// The helper's commands run in process, but for sized (a person's exec),
// which would replace the test's process: its command runs as a child on
// this machine, in the box's directory. An exec of any other program
// fails with exit code 127, and PID 1 (the helper's init) is not started,
// so nothing watches a box between calls and no idle timer stops it.
package membox

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/runner"
)

// Provider keeps its boxes under Dir.
type Provider struct {
	// Dir holds a directory per box (a test's temp dir).
	Dir string

	mu      sync.Mutex
	boxes   map[string]*memBox
	volumes map[string]map[string]string // name -> labels
	// Execs counts the execs run, by the helper command's name.
	Execs map[string]int
}

type memBox struct {
	spec    box.Spec
	state   box.State
	exit    int
	root    string
	created time.Time
}

// New is a provider whose boxes live under dir.
func New(dir string) *Provider {
	return &Provider{Dir: dir, boxes: map[string]*memBox{}, volumes: map[string]map[string]string{}, Execs: map[string]int{}}
}

// Caps: none of the optional capabilities but freezing, which a paused
// box's state stands for.
func (p *Provider) Caps() box.Caps { return box.Caps{Freeze: true} }

// Endpoint names the provider; no engine listens anywhere.
func (p *Provider) Endpoint(context.Context) (string, error) { return "memory://" + p.Dir, nil }

// Versions are the provider's own.
func (p *Provider) Versions(context.Context) (string, string, error) {
	return "membox", "membox", nil
}

// Create makes box spec.Name: a directory with the spec's volumes' mount
// points in it, created (not running).
func (p *Provider) Create(_ context.Context, spec box.Spec) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.boxes[spec.Name]; ok {
		return "", fmt.Errorf("%w: %s", box.ErrNameInUse, spec.Name)
	}
	root := filepath.Join(p.Dir, "boxes", spec.Name)
	for _, d := range []string{"src", "tmp", protocol.Dir} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return "", err
		}
	}
	for _, m := range spec.Volumes {
		if _, ok := p.volumes[m.Volume]; !ok {
			p.volumes[m.Volume] = maps.Clone(spec.VolumeLabels)
		}
		if err := os.MkdirAll(filepath.Join(root, m.Target), 0o755); err != nil {
			return "", err
		}
	}
	p.boxes[spec.Name] = &memBox{spec: spec, state: "created", root: root, created: time.Now()}
	return "", nil
}

// fail is a refusal of kind about name, as a provider classifies its
// engine's.
func fail(kind error, name string) error {
	return &box.Error{Kind: kind, Err: fmt.Errorf("%v: %s", kind, name)}
}

// get is box name, or ErrNotFound.
func (p *Provider) get(name string) (*memBox, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.boxes[name]
	if !ok {
		return nil, fail(box.ErrNotFound, name)
	}
	return b, nil
}

// Exec runs the helper in box name's directory. The box must be running.
func (p *Provider) Exec(ctx context.Context, name string, spec box.ExecSpec, s box.Streams) (runner.Result, error) {
	b, err := p.get(name)
	if err != nil {
		return runner.Result{}, err
	}
	p.mu.Lock()
	state := b.state
	p.mu.Unlock()
	switch state {
	case "running":
	case "paused":
		return runner.Result{}, fail(box.ErrPaused, name)
	default:
		return runner.Result{}, fail(box.ErrNotRunning, name)
	}
	args, ok := helperArgs(spec.Cmd)
	if !ok {
		msg := "membox runs only the helper, not " + strings.Join(spec.Cmd, " ") + "\n"
		if s.Stderr != nil {
			io.WriteString(s.Stderr, msg)
		}
		return runner.Result{ExitCode: 127, Stderr: []byte(msg)}, nil
	}
	p.count(args)
	if len(args) > 1 && args[0] == "sized" {
		return p.child(ctx, b.root, spec, args[1:], s)
	}
	// As a runner does, a stream left nil is kept in the result.
	var out, errb strings.Builder
	if s.Stdout == nil {
		s.Stdout = &out
	}
	if s.Stderr == nil {
		s.Stderr = &errb
	}
	code := p.run(ctx, b.root, args, s)
	// The command's own non-zero exit is a result, not an error, as every
	// provider gives it.
	return runner.Result{ExitCode: code, Stdout: []byte(out.String()), Stderr: []byte(errb.String())}, nil
}

// child runs cmd on this machine in the box's directory, in the box's
// workdir, with the exec's environment; its non-zero exit is a result.
func (p *Provider) child(ctx context.Context, root string, spec box.ExecSpec, cmd []string, s box.Streams) (runner.Result, error) {
	wd := spec.Workdir
	if wd == "" {
		wd = "/src"
	}
	var env []string
	for k, v := range spec.Env {
		env = append(env, k+"="+v)
	}
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	res, err := runner.NewExec(quiet).Run(ctx, runner.Cmd{Name: cmd[0], Args: cmd[1:], Dir: filepath.Join(root, filepath.FromSlash(wd)), Env: env, Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr})
	if ee, ok := runner.AsExit(err); ok {
		return ee.Result, nil
	}
	return res, err
}

// helperArgs are the helper's arguments when cmd runs the helper (itself
// or through its loader).
func helperArgs(cmd []string) ([]string, bool) {
	for i, a := range cmd {
		if path.Base(a) == protocol.Name {
			return append([]string(nil), cmd[i+1:]...), true
		}
	}
	return nil, false
}

func (p *Provider) count(args []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(args) > 0 {
		p.Execs[args[0]]++
	}
}

// run runs the helper with args on root, its streams defaulting to
// nothing; a ctx that ends closes stdin, as a killed docker exec would.
func (p *Provider) run(ctx context.Context, root string, args []string, s box.Streams) int {
	stdin := s.Stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	stdout, stderr := s.Stdout, s.Stderr
	if ctx.Done() != nil {
		r, w := io.Pipe()
		stop := context.AfterFunc(ctx, func() { w.CloseWithError(ctx.Err()) })
		defer stop()
		in := stdin
		go func() { _, err := io.Copy(w, in); w.CloseWithError(err) }()
		stdin = r
	}
	return helper.RunIn(root, args, stdin, stdout, stderr)
}

// CopyIn extracts the tar stream into dir of box name.
func (p *Provider) CopyIn(_ context.Context, name, dir string, tr io.Reader) error {
	b, err := p.get(name)
	if err != nil {
		return err
	}
	return untar(filepath.Join(b.root, filepath.FromSlash(dir)), tr)
}

// untar writes the archive's directories, files and links under dir,
// refusing any name that leaves it.
func untar(dir string, r io.Reader) error {
	rd := tar.NewReader(r)
	for {
		h, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)
		dst := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		mode := os.FileMode(h.Mode).Perm()
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(dst, mode|0o700)
		case tar.TypeSymlink:
			err = os.Symlink(h.Linkname, dst)
		case tar.TypeReg:
			err = writeFile(dst, rd, mode)
		}
		if err != nil {
			return err
		}
	}
}

func writeFile(dst string, r io.Reader, mode os.FileMode) error {
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_EXCL, mode)
	if errors.Is(err, os.ErrExist) {
		if err = os.Remove(dst); err == nil {
			f, err = os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		}
	}
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CopyOut writes a tar stream of path in box name, named by its base
// name as docker cp names it.
func (p *Provider) CopyOut(_ context.Context, name, pth string, w io.Writer) error {
	b, err := p.get(name)
	if err != nil {
		return err
	}
	src := filepath.Join(b.root, filepath.FromSlash(pth))
	tw := tar.NewWriter(w)
	base := path.Base(pth)
	err = filepath.Walk(src, func(f string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, f)
		link := ""
		if fi.Mode()&os.ModeSymlink != 0 {
			link, _ = os.Readlink(f)
		}
		h, err := tar.FileInfoHeader(fi, link)
		if err != nil {
			return err
		}
		h.Name = path.Join(base, filepath.ToSlash(rel))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if fi.Mode().IsRegular() {
			rf, err := os.Open(f)
			if err != nil {
				return err
			}
			defer rf.Close()
			_, err = io.Copy(tw, rf)
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	return tw.Close()
}

// setState moves box name from one of states to to, or returns bad.
func (p *Provider) setState(name string, to box.State, bad error, from ...box.State) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.boxes[name]
	if !ok {
		return fail(box.ErrNotFound, name)
	}
	for _, f := range from {
		if b.state == f {
			b.state = to
			return nil
		}
	}
	return fail(bad, name)
}

// Pause freezes a running box.
func (p *Provider) Pause(_ context.Context, name string) error {
	b, err := p.get(name)
	if err == nil && b.state == "paused" {
		return fail(box.ErrAlreadyPaused, name)
	}
	return p.setState(name, "paused", box.ErrNotRunning, "running")
}

// Unpause thaws a paused box.
func (p *Provider) Unpause(_ context.Context, name string) error {
	return p.setState(name, "running", box.ErrNotPaused, "paused")
}

// Start runs a created or exited box; a running one stays running.
func (p *Provider) Start(_ context.Context, name string) error {
	return p.setState(name, "running", box.ErrPaused, "created", "exited", "running")
}

// Stop ends a box's PID 1 with code, as the idle timer does; for tests.
func (p *Provider) Stop(name string, code int) error {
	if err := p.setState(name, "exited", box.ErrNotRunning, "running"); err != nil {
		return err
	}
	b, _ := p.get(name)
	p.mu.Lock()
	b.exit = code
	p.mu.Unlock()
	return nil
}

// Remove deletes box name and its directory (its anonymous volumes with
// it); named volumes stay until RemoveVolume.
func (p *Provider) Remove(_ context.Context, name string) error {
	p.mu.Lock()
	b, ok := p.boxes[name]
	delete(p.boxes, name)
	p.mu.Unlock()
	if !ok {
		return fail(box.ErrNotFound, name)
	}
	return os.RemoveAll(b.root)
}

// CreateVolume makes volume name.
func (p *Provider) CreateVolume(_ context.Context, name string, labels map[string]string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.volumes[name]; !ok {
		p.volumes[name] = maps.Clone(labels)
	}
	return nil
}

// RemoveVolume forgets volume name.
func (p *Provider) RemoveVolume(_ context.Context, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.volumes[name]; !ok {
		return fail(box.ErrNoSuchVolume, name)
	}
	delete(p.volumes, name)
	return nil
}

// Volumes are the names of the volumes whose labels hold every filter.
func (p *Provider) Volumes(_ context.Context, filters map[string]string) ([]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for name, labels := range p.volumes {
		if matches(labels, filters) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// VolumeLabels are volume name's labels.
func (p *Provider) VolumeLabels(_ context.Context, name string) (map[string]string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.volumes[name]
	if !ok {
		return nil, fail(box.ErrNoSuchVolume, name)
	}
	return maps.Clone(l), nil
}

// Inspect is box name's state and labels.
func (p *Provider) Inspect(_ context.Context, name string) (box.Inspection, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.boxes[name]
	if !ok {
		return box.Inspection{}, fail(box.ErrNotFound, name)
	}
	return box.Inspection{State: b.state, Labels: maps.Clone(b.spec.Labels), ExitCode: b.exit}, nil
}

// List is every box whose labels hold the filters ("label" keys: a
// "key=value" or a bare "key"), sorted by name.
func (p *Provider) List(_ context.Context, filters map[string]string, _ []string) ([]box.Summary, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []box.Summary
	for name, b := range p.boxes {
		if !matches(b.spec.Labels, filters) {
			continue
		}
		status := string(b.state)
		if b.state == "exited" {
			// As docker's status line says it, which list reads for the
			// idle stop.
			status = fmt.Sprintf("Exited (%d)", b.exit)
		}
		out = append(out, box.Summary{Name: name, State: b.state, Status: status, Created: b.created.Format(time.RFC3339), Labels: maps.Clone(b.spec.Labels)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// matches reports whether labels hold every filter: key=value, or a key
// with an empty value for any value.
func matches(labels, filters map[string]string) bool {
	for k, v := range filters {
		got, ok := labels[k]
		if !ok || (v != "" && got != v) {
			return false
		}
	}
	return true
}
