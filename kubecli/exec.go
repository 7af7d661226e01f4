package kubecli

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/runner"
)

// Exec runs a command in the pod with `kubectl exec`. kubectl exec has no
// --env, --workdir or --detach, so a command that needs one runs through the
// helper's with-env: the environment in its argv, as docker exec --env
// shows it, except secrets, which it reads from the head of stdin, so no
// secret is in an argv. There is no --user either: every exec runs as the
// pod's user. A non-zero exit of the command is the Result's ExitCode with
// a nil error, as on docker.
func (c *Client) Exec(ctx context.Context, name string, spec box.ExecSpec, s box.Streams) (runner.Result, error) {
	obj, checked := c.objects.of(name)
	if !checked {
		obj = name
	}
	if !checked && s.Stdin != nil {
		// An input cannot be given twice, and a name may be an alias
		// (claim.go): resolve it first. The core inspects a sandbox
		// before its calls, so this is rare.
		st, err := c.state(ctx, name)
		if err != nil {
			return runner.Result{}, err
		}
		obj = st.obj
	}
	res, err := c.exec(ctx, obj, spec, s)
	if !errors.Is(err, errNotFound) {
		return res, execError(obj, err)
	}
	// No pod of that name: a box a claim named (its alias not yet
	// resolved here, or resolved to a pod since made again), or a stopped
	// sandbox if its record is there.
	c.objects.forget(name)
	st, serr := c.state(ctx, name)
	if serr != nil {
		return res, execError(obj, err)
	}
	if st.obj != obj {
		if s.Stdin != nil {
			// Its input may be spent: the caller calls again.
			return res, fmt.Errorf("%s is another pod than when this process last looked (deleted and made again?): call again", name)
		}
		if res, err = c.exec(ctx, st.obj, spec, s); !errors.Is(err, errNotFound) {
			return res, execError(st.obj, err)
		}
	}
	return res, &box.Error{Kind: box.ErrNotRunning, Err: fmt.Errorf("pod %s is not running: %w", name, err)}
}

// exec is Exec on the pod called obj. kubectl's refusal of the exec is
// classified but not yet turned into docker's kinds.
func (c *Client) exec(ctx context.Context, name string, spec box.ExecSpec, s box.Streams) (runner.Result, error) {
	cmd, shown := c.execCmd(name, spec, s.Stdin)
	filter := &stderrFilter{w: s.Stderr}
	cmd.Stdout, cmd.Stderr, cmd.OwnGroup = s.Stdout, filter, spec.OwnGroup
	if cr := spec.Carried; cr != nil {
		cmd.Carried = &runner.Result{ExitCode: cr.ExitCode, Duration: cr.Took}
	}
	if spec.Shown != nil {
		sh, _ := c.execCmd(name, spec.Shown.Spec, nil)
		cmd.Shown = &runner.Shown{Cmd: c.cmd(sh), Input: spec.Shown.Input, HasInput: spec.Shown.HasInput, Note: spec.Shown.Note}
	} else if shown != nil {
		cmd.Shown = &runner.Shown{Cmd: c.cmd(*shown), Note: "through the helper's with-env (kubectl exec has no --env, --workdir or --detach)"}
	}
	res, err := c.Runner.Run(ctx, c.cmd(cmd))
	filter.flush()
	if s.Stderr == nil {
		res.Stderr = filter.kept.Bytes()
	}
	if err == nil {
		return res, nil
	}
	ee, ok := runner.AsExit(err)
	if !ok {
		return res, classify(err)
	}
	if filter.exited {
		ee.Result.Stderr = res.Stderr
		return ee.Result, nil
	}
	// kubectl's own failure: its message is the last line of stderr.
	ee.Result.Stderr = []byte(filter.last)
	return res, classify(ee)
}

// execCmd is the kubectl exec for spec, and, when the command goes through
// with-env, the equivalent a human would type (for the log).
func (c *Client) execCmd(name string, spec box.ExecSpec, stdin io.Reader) (runner.Cmd, *runner.Cmd) {
	wrap := len(spec.Env) > 0 || len(spec.Secrets) > 0 || spec.Workdir != "" || spec.Detach
	secrets := len(spec.Secrets) > 0
	a := []string{"exec"}
	if spec.Interactive || secrets {
		a = append(a, "-i")
	}
	if spec.TTY {
		a = append(a, "-t")
	}
	a = append(a, name, "--container", container, "--")
	if !wrap {
		return runner.Cmd{Args: append(a, spec.Cmd...), Stdin: stdin, StdinKey: spec.StdinKey}, nil
	}
	w := protocol.CmdWithEnv{Detach: spec.Detach, Dir: spec.Workdir, Secrets: secrets, Cmd: spec.Cmd}
	for _, k := range slices.Sorted(maps.Keys(spec.Env)) {
		w.Env = append(w.Env, k+"="+spec.Env[k])
	}
	argv := helperArgv(w)
	shown := runner.Cmd{Args: append(slices.Clone(a), spec.Cmd...)}
	cmd := runner.Cmd{Args: append(a, argv...), Stdin: stdin, StdinKey: spec.StdinKey}
	if !secrets {
		return cmd, &shown
	}
	var block bytes.Buffer
	names := slices.Sorted(maps.Keys(spec.Secrets))
	for _, k := range names {
		block.WriteString(k + "=" + spec.Secrets[k] + "\x00")
	}
	head := strconv.Itoa(block.Len()) + "\n" + block.String()
	cmd.Stdin = io.Reader(strings.NewReader(head))
	if stdin != nil {
		cmd.Stdin = io.MultiReader(cmd.Stdin, stdin)
	}
	cmd.StdinKey = envKey(len(head), names, spec.StdinKey)
	return cmd, &shown
}

// helperArgv runs the helper's command c by the link its delivery makes.
func helperArgv(c protocol.Command) []string { return append([]string{helperLink}, c.Argv()...) }

// envKey is what a transcript matches a wrapped exec's stdin by: the names
// in the environment block (never a value) and the rest by the exec's own
// key.
func envKey(head int, names []string, rest func([]byte) string) func([]byte) string {
	return func(b []byte) string {
		k := "env " + strings.Join(names, ",")
		if len(b) < head {
			return k
		}
		if rest != nil {
			return k + "; " + rest(b[head:])
		}
		return k + "; " + fmt.Sprintf("%d bytes", len(b)-head)
	}
}

// execError turns kubectl's refusal of an exec into docker's kinds.
func execError(name string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, errNotFound) {
		return &box.Error{Kind: box.ErrNotFound, Err: err}
	}
	// A pod whose PID 1 ended (the idle stop) is "completed".
	if msg := err.Error(); strings.Contains(msg, "container not found") || strings.Contains(msg, "not running") || strings.Contains(msg, "in a completed pod") {
		return &box.Error{Kind: box.ErrNotRunning, Err: fmt.Errorf("pod %s is not running: %w", name, err)}
	}
	return err
}

var exitLine = regexp.MustCompile(`^command terminated with exit code \d+$`)

// stderrFilter passes the command's stderr on, less kubectl's "command
// terminated with exit code N" line, which says the command (not kubectl)
// failed. It keeps the last line for kubectl's own errors, and everything
// when the caller gave no writer.
type stderrFilter struct {
	w       io.Writer
	partial []byte
	kept    bytes.Buffer
	last    string
	exited  bool
}

func (f *stderrFilter) Write(p []byte) (int, error) {
	f.partial = append(f.partial, p...)
	for {
		i := bytes.IndexByte(f.partial, '\n')
		if i < 0 {
			break
		}
		line := f.partial[:i+1]
		f.partial = f.partial[i+1:]
		if err := f.line(line); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

func (f *stderrFilter) line(line []byte) error {
	text := strings.TrimSpace(string(line))
	if exitLine.MatchString(text) {
		f.exited = true
		return nil
	}
	if text != "" {
		f.last = text
	}
	if f.w != nil {
		_, err := f.w.Write(line)
		return err
	}
	if f.kept.Len() < 1<<20 {
		f.kept.Write(line)
	}
	return nil
}

func (f *stderrFilter) flush() {
	if len(f.partial) > 0 {
		_ = f.line(f.partial)
		f.partial = nil
	}
}

// CopyIn extracts the tar stream r into dir in the pod through the helper's
// untar. The helper's own delivery comes first, before any helper runs in
// the pod: it is written with the image's shell, file by file.
func (c *Client) CopyIn(ctx context.Context, name, dir string, r io.Reader) error {
	if dir == path.Dir(helperLink) {
		return c.deliver(ctx, name, r)
	}
	_, err := c.checked(ctx, name, box.ExecSpec{Interactive: true, Cmd: helperArgv(protocol.CmdUntar{Dir: dir})}, r)
	return err
}

// deliver writes each file of the helper's tar with `sh -c 'cat > FILE'`
// into a temporary name then renames it, so the pod's first process (which
// waits for the helper to be executable) never runs half a file, and links
// the helper where execs find it.
func (c *Client) deliver(ctx context.Context, name string, r io.Reader) error {
	tr := tar.NewReader(r)
	base := path.Dir(helperLink)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		p := path.Join(base, path.Clean("/"+h.Name))
		link := ""
		if path.Base(p) == path.Base(helperLink) {
			link = ` && ln -sfn "$1" ` + helperLink
		}
		script := fmt.Sprintf(`mkdir -p "$(dirname "$1")" && cat > "$1.part" && chmod %o "$1.part" && mv "$1.part" "$1"`, h.Mode&0o777) + link
		spec := box.ExecSpec{Interactive: true, Cmd: []string{"/bin/sh", "-c", script, "sh", p}}
		if _, err := c.checked(ctx, name, spec, &runner.NamedReader{Reader: io.LimitReader(tr, h.Size), Name: h.Name}); err != nil {
			return err
		}
	}
}

// checked runs an exec that must succeed.
func (c *Client) checked(ctx context.Context, name string, spec box.ExecSpec, stdin io.Reader) (runner.Result, error) {
	res, err := c.Exec(ctx, name, spec, box.Streams{Stdin: stdin})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("`%s` in pod %s exited with code %d: %s", strings.Join(spec.Cmd, " "), name, res.ExitCode, agenttext.FirstLine(string(res.Stderr)))
	}
	return res, err
}

// CopyOut writes a tar of path in the pod to w, through the helper.
func (c *Client) CopyOut(ctx context.Context, name, p string, w io.Writer) error {
	res, err := c.Exec(ctx, name, box.ExecSpec{Cmd: helperArgv(protocol.CmdTar{Path: p})}, box.Streams{Stdout: w})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("reading %s from pod %s: %s", p, name, agenttext.FirstLine(string(res.Stderr)))
	}
	return err
}

// PortForward runs `kubectl port-forward` for the pod on 127.0.0.1 until ctx
// ends (Ctrl-C), its messages going to out.
func (c *Client) PortForward(ctx context.Context, name string, pairs []string, out io.Writer) error {
	st, err := c.state(ctx, name)
	if err != nil {
		return err
	}
	args := append([]string{"port-forward", "--address", "127.0.0.1", "pod/" + st.obj}, pairs...)
	_, err = c.run(ctx, runner.Cmd{Args: args, Stdout: out, Stderr: out})
	if ctx.Err() != nil {
		return nil
	}
	return err
}
