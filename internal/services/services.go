// Package services runs a sandbox's long-running services (a dev server, a
// database) declared in [container.services]: started by a detached exec each,
// under a small monitor shell that records the pid and exit code in the
// sandbox's /tmp, and controlled by service.sh, which travels on the exec's
// stdin. No daemon: the monitors are the state. Services need a shell in the
// image.
package services

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
)

//go:embed service.sh
var source string

// script is service.sh without its comment lines. It travels on stdin, in
// front of the call's own input, so the argv stays one short line that -v
// can log: loader reads exactly its length (read -r takes one byte at a
// time, dd with fullblock exactly n) and runs it with the call's arguments.
var script = stripComments(source)

const loader = `IFS= read -r n && s=$(dd bs="$n" count=1 iflag=fullblock 2>/dev/null) && eval "$s"`

func stripComments(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// LogDir is where each service's output goes inside the sandbox, as
// <name>.log; an agent can read it with bash.
const LogDir = "/tmp/litterbox/services"

// Actions.
const (
	Start   = "start"
	Stop    = "stop"
	Restart = "restart"
	Status  = "status"
)

// Actions are the actions a caller may ask for.
var Actions = []string{Start, Stop, Restart, Status}

// States.
const (
	Running    = "running"
	Stopped    = "stopped"     // stopped on request
	Exited     = "exited"      // ended on its own
	NotStarted = "not-started" // never started since the container started
)

// State is one service as the sandbox reports it.
type State struct {
	Name  string `json:"name"`
	State string `json:"state"`
	PID   int    `json:"pid,omitempty"`
	// ExitCode is set once the service has ended; 128+N means signal N.
	ExitCode *int     `json:"exit_code,omitempty"`
	Command  []string `json:"command"`
	Log      string   `json:"log"`
}

// String is the state as one line: "web: running (pid 64)",
// "web: stopped (exit code 143)".
func (s State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", s.Name, s.State)
	if s.PID > 0 {
		fmt.Fprintf(&b, " (pid %d)", s.PID)
	}
	if s.ExitCode != nil {
		fmt.Fprintf(&b, " (exit code %d)", *s.ExitCode)
	}
	return b.String()
}

// Error is a service action that did not get its service running.
type Error struct {
	State State
	Tail  string // the end of its log
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("service %q is %s", e.State.Name, e.State.State)
	if e.State.ExitCode != nil {
		msg += fmt.Sprintf(" (exit code %d)", *e.State.ExitCode)
	}
	if t := lastLine(e.Tail); t != "" {
		msg += ": " + t
	}
	return msg
}

// Box is the services of one sandbox.
type Box struct {
	// Box is the sandbox's container, whose handle gives every command
	// what its own environment lacks (box.Box.Env).
	Box     box.Box
	Sandbox string // its name, for messages
	Specs   map[string]config.ServiceSpec
	// Secrets are the services' secret environment, which the argv names
	// but never holds.
	Secrets map[string]string
	// EngineErr explains an exec the engine refused (no such container,
	// paused) in the sandbox's terms.
	EngineErr func(error) error
}

// Pick names the services an action applies to: the one named, or for
// status and start with none named, all of them.
func Pick(sandbox string, specs map[string]config.ServiceSpec, action, service string) ([]string, error) {
	all := slices.Sorted(maps.Keys(specs))
	if service == "" {
		if action != Status && action != Start {
			return nil, fmt.Errorf("name the service to %s (sandbox '%s' has: %s)", action, sandbox, listOrNone(all))
		}
		return all, nil
	}
	if _, ok := specs[service]; !ok {
		return nil, fmt.Errorf("sandbox '%s' has no service %q (it has: %s; services come from [container.services] in %s at create time)", sandbox, service, listOrNone(all), config.File)
	}
	return []string{service}, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// monitor runs one service and records its pid (with the start's token) and
// exit code. It runs in the foreground of a detached exec: a background job
// of a non-interactive sh would start with SIGINT and SIGQUIT ignored, and no
// stop or restart signal of those could reach the service. setsid gives the
// service a process group of its own for stop to signal.
const monitor = `d=$1 n=$2 tok=$3
shift 3
f=$d/$n
mkdir -p "$d" || exit 1
if [ -f "$f.pid" ] && [ ! -f "$f.rc" ] && read -r p _ <"$f.pid" && kill -0 "$p" 2>/dev/null; then exit 0; fi
rm -f "$f.pid" "$f.rc" "$f.rc.new" "$f.stopped"
echo "--- litterbox: starting $n at $(date '+%Y-%m-%d %H:%M:%S')" >>"$f.log"
cd /src 2>/dev/null || cd /
sh -c 'echo "$$ $1" >"$2.pid"; shift 2; exec setsid "$@"' run "$tok" "$f" "$@" </dev/null >>"$f.log" 2>&1
echo $? >"$f.rc.new" && mv -f "$f.rc.new" "$f.rc"`

// Start starts every named service that is not running, one detached exec
// each, then waits for them in one more. token tells this start apart.
func (b *Box) Start(ctx context.Context, names []string, token string) ([]State, error) {
	if len(names) == 0 {
		return []State{}, nil
	}
	names = slices.Sorted(slices.Values(names))
	for _, n := range names {
		argv := append([]string{"sh", "-c", monitor, "litterbox-service", LogDir, n, token}, b.Specs[n].Command...)
		if _, err := b.Box.Exec(ctx, box.ExecSpec{Detach: true, Cmd: argv, Secrets: b.Secrets}, box.Streams{}); err != nil {
			return nil, b.EngineErr(err)
		}
	}
	return b.report(ctx, append([]string{"await", token}, names...))
}

// Stop stops a service: its stop signal, then KILL after its timeout.
func (b *Box) Stop(ctx context.Context, name string) ([]State, error) {
	spec := b.Specs[name]
	sig := spec.Stop
	if sig == "" {
		sig = config.DefaultStopSignal
	}
	return b.report(ctx, []string{"stop", sig, strconv.Itoa(spec.StopTimeout), name})
}

// Restart sends the restart signal when one is configured and the service
// runs; otherwise it stops and starts it, with a token from token.
func (b *Box) Restart(ctx context.Context, name string, token func() string) ([]State, error) {
	if sig := b.Specs[name].Restart; sig != "" {
		states, err := b.report(ctx, []string{"signal", sig, name})
		if err != nil || states[0].State == Running {
			return states, err
		}
	} else if _, err := b.Stop(ctx, name); err != nil {
		return nil, err
	}
	return b.Start(ctx, []string{name}, token())
}

// Status reports the named services.
func (b *Box) Status(ctx context.Context, names []string) ([]State, error) {
	return b.report(ctx, append([]string{"status"}, names...))
}

// Logs returns a service's log, its last lines when lines > 0.
func (b *Box) Logs(ctx context.Context, name string, lines int) ([]byte, error) {
	return b.run(ctx, []string{"logs", strconv.Itoa(max(lines, 0)), name})
}

// CheckStarted turns a service that died at once into an error with the end
// of its log, which is what the caller needs to fix it.
func (b *Box) CheckStarted(ctx context.Context, states []State) error {
	var errs []error
	for _, s := range states {
		if s.State == Running {
			continue
		}
		tail, _ := b.Logs(ctx, s.Name, 5)
		errs = append(errs, &Error{State: s, Tail: string(tail)})
	}
	return errors.Join(errs...)
}

// report runs the service script with args and parses its report.
func (b *Box) report(ctx context.Context, args []string) ([]State, error) {
	out, err := b.run(ctx, args)
	if err != nil {
		return nil, err
	}
	states, err := parseReport(out)
	if err != nil {
		return nil, err
	}
	for i := range states {
		states[i].Command = b.Specs[states[i].Name].Command
	}
	return states, nil
}

func (b *Box) run(ctx context.Context, args []string) ([]byte, error) {
	argv := append([]string{"sh", "-c", loader, "litterbox-service"}, args...)
	stdin := strings.NewReader(strconv.Itoa(len(script)) + "\n" + script)
	var stdout, stderr bytes.Buffer
	res, err := b.Box.Exec(ctx, box.ExecSpec{Interactive: true, Cmd: argv},
		box.Streams{Stdin: stdin, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		return nil, b.EngineErr(err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("service control in sandbox '%s' exited with code %d: %s", b.Sandbox, res.ExitCode, agenttext.FirstLine(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// parseReport reads "SVC name state pid|- code|-" lines.
func parseReport(out []byte) ([]State, error) {
	var states []State
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 5 || f[0] != "SVC" {
			return nil, fmt.Errorf("unexpected service report line %q", sc.Text())
		}
		s := State{Name: f[1], State: f[2], Log: LogDir + "/" + f[1] + ".log"}
		if pid, err := strconv.Atoi(f[3]); err == nil {
			s.PID = pid
		}
		if code, err := strconv.Atoi(f[4]); err == nil {
			s.ExitCode = &code
		}
		states = append(states, s)
	}
	return states, sc.Err()
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
