package sandbox

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/config"
	"github.com/litterbox-dev/litterbox/dockercli"
)

//go:embed script/service.sh
var serviceSource string

// serviceScript is service.sh without its comment lines. It travels on
// stdin, in front of the call's own input, so the argv stays one short line
// that -v can log: scriptLoader reads exactly its length (read -r takes one
// byte at a time, dd with fullblock exactly n) and runs it with the call's
// arguments.
var serviceScript = stripComments(serviceSource)

const scriptLoader = `IFS= read -r n && s=$(dd bs="$n" count=1 iflag=fullblock 2>/dev/null) && eval "$s"`

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

// ServiceLogDir is where each service's output goes inside the sandbox, as
// <name>.log; an agent can read it with bash.
const ServiceLogDir = "/tmp/litterbox/services"

// Service actions.
const (
	ServiceStart   = "start"
	ServiceStop    = "stop"
	ServiceRestart = "restart"
	ServiceStatus  = "status"
)

// ServiceActions are the actions Service accepts.
var ServiceActions = []string{ServiceStart, ServiceStop, ServiceRestart, ServiceStatus}

// Service states.
const (
	ServiceRunning    = "running"
	ServiceStopped    = "stopped"     // stopped on request
	ServiceExited     = "exited"      // ended on its own
	ServiceNotStarted = "not-started" // never started since the container started
)

// ServiceState is one service as the sandbox reports it.
type ServiceState struct {
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
func (s ServiceState) String() string {
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

// ServiceError is a service action that did not get its service running.
type ServiceError struct {
	State ServiceState
	Tail  string // the end of its log
}

func (e *ServiceError) Error() string {
	msg := fmt.Sprintf("service %q is %s", e.State.Name, e.State.State)
	if e.State.ExitCode != nil {
		msg += fmt.Sprintf(" (exit code %d)", *e.State.ExitCode)
	}
	if t := lastLine(e.Tail); t != "" {
		msg += ": " + t
	}
	return msg
}

// Service runs action on one service of a sandbox; status with no service
// reports them all.
func (m *Manager) Service(ctx context.Context, name, action, service string) ([]ServiceState, error) {
	slug, err := m.resolve(name)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(ServiceActions, action) {
		return nil, fmt.Errorf("unknown service action %q: want %s or logs", action, strings.Join(ServiceActions, ", "))
	}
	rec, err := m.store().load(slug)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, m.missingOrNotFound(ctx, slug)
	}
	names, err := pickServices(slug, rec.Services, action, service)
	if err != nil {
		return nil, err
	}
	// Service calls on one sandbox take turns, but not with file changes: a
	// stop may wait out a grace period.
	unlock, err := m.lockNamed(ctx, slug, slug+".services")
	if err != nil {
		return nil, err
	}
	defer unlock()
	container := m.Names(slug).Container
	var states []ServiceState
	switch action {
	case ServiceStatus:
		states, err = m.serviceExec(ctx, slug, container, rec.Services, append([]string{"status"}, names...))
	case ServiceStart:
		states, err = m.startServices(ctx, slug, container, pick(rec.Services, names))
	case ServiceStop:
		states, err = m.stopService(ctx, slug, container, service, rec.Services[service])
	case ServiceRestart:
		states, err = m.restartService(ctx, slug, container, service, rec.Services[service])
	}
	if err != nil {
		return nil, err
	}
	if action == ServiceStart || action == ServiceRestart {
		return states, m.checkStarted(ctx, slug, container, states)
	}
	return states, nil
}

func pickServices(slug string, specs map[string]config.ServiceSpec, action, service string) ([]string, error) {
	all := slices.Sorted(maps.Keys(specs))
	if service == "" {
		if action != ServiceStatus && action != ServiceStart {
			return nil, fmt.Errorf("name the service to %s (sandbox '%s' has: %s)", action, slug, listOrNone(all))
		}
		return all, nil
	}
	if _, ok := specs[service]; !ok {
		return nil, fmt.Errorf("sandbox '%s' has no service %q (it has: %s; services come from [container.services] in %s at create time)", slug, service, listOrNone(all), config.File)
	}
	return []string{service}, nil
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func pick(specs map[string]config.ServiceSpec, names []string) map[string]config.ServiceSpec {
	out := map[string]config.ServiceSpec{}
	for _, n := range names {
		out[n] = specs[n]
	}
	return out
}

// serviceMonitor runs one service and records its pid (with the start's
// token) and exit code. It runs in the foreground of a detached exec: a
// background job of a non-interactive sh would start with SIGINT and SIGQUIT
// ignored, and no stop or restart signal of those could reach the service.
// setsid gives the service a process group of its own for stop to signal.
const serviceMonitor = `d=$1 n=$2 tok=$3
shift 3
f=$d/$n
mkdir -p "$d" || exit 1
if [ -f "$f.pid" ] && [ ! -f "$f.rc" ] && read -r p _ <"$f.pid" && kill -0 "$p" 2>/dev/null; then exit 0; fi
rm -f "$f.pid" "$f.rc" "$f.stopped"
echo "--- litterbox: starting $n at $(date '+%Y-%m-%d %H:%M:%S')" >>"$f.log"
cd /src 2>/dev/null || cd /
sh -c 'echo "$$ $1" >"$2.pid"; shift 2; exec setsid "$@"' run "$tok" "$f" "$@" </dev/null >>"$f.log" 2>&1
echo $? >"$f.rc"`

// startServices starts every given service that is not running, one
// detached exec each, then waits for them in one more.
func (m *Manager) startServices(ctx context.Context, slug, container string, specs map[string]config.ServiceSpec) ([]ServiceState, error) {
	if len(specs) == 0 {
		return []ServiceState{}, nil
	}
	tok := fmt.Sprintf("%x-%d", m.Now().UnixNano(), m.startSeq.Add(1))
	names := slices.Sorted(maps.Keys(specs))
	for _, n := range names {
		argv := append([]string{"sh", "-c", serviceMonitor, "litterbox-service", ServiceLogDir, n, tok}, specs[n].Command...)
		if _, err := m.Provider.Exec(ctx, container, dockercli.ExecSpec{Detach: true, Cmd: argv}, dockercli.Streams{}); err != nil {
			return nil, m.execError(ctx, slug, err)
		}
	}
	return m.serviceExec(ctx, slug, container, specs, append([]string{"await", tok}, names...))
}

func (m *Manager) stopService(ctx context.Context, slug, container, name string, spec config.ServiceSpec) ([]ServiceState, error) {
	sig := spec.Stop
	if sig == "" {
		sig = config.DefaultStopSignal
	}
	return m.serviceExec(ctx, slug, container, map[string]config.ServiceSpec{name: spec}, []string{"stop", sig, strconv.Itoa(spec.StopTimeout), name})
}

// restartService sends the restart signal when one is configured and the
// service runs; otherwise it stops and starts it.
func (m *Manager) restartService(ctx context.Context, slug, container, name string, spec config.ServiceSpec) ([]ServiceState, error) {
	specs := map[string]config.ServiceSpec{name: spec}
	if spec.Restart != "" {
		states, err := m.serviceExec(ctx, slug, container, specs, []string{"signal", spec.Restart, name})
		if err != nil || states[0].State == ServiceRunning {
			return states, err
		}
	} else if _, err := m.stopService(ctx, slug, container, name, spec); err != nil {
		return nil, err
	}
	return m.startServices(ctx, slug, container, specs)
}

// checkStarted turns a service that died at once into an error with the end
// of its log, which is what the caller needs to fix it. The log is read from
// container itself: resume may start sandboxes of other repositories.
func (m *Manager) checkStarted(ctx context.Context, slug, container string, states []ServiceState) error {
	var errs []error
	for _, s := range states {
		if s.State == ServiceRunning {
			continue
		}
		tail, _ := m.runServiceScript(ctx, slug, container, []string{"logs", "5", s.Name})
		errs = append(errs, &ServiceError{State: s, Tail: string(tail)})
	}
	return errors.Join(errs...)
}

// serviceExec runs the service script with args and parses its report.
func (m *Manager) serviceExec(ctx context.Context, slug, container string, specs map[string]config.ServiceSpec, args []string) ([]ServiceState, error) {
	out, err := m.runServiceScript(ctx, slug, container, args)
	if err != nil {
		return nil, err
	}
	states, err := parseServiceReport(out)
	if err != nil {
		return nil, err
	}
	for i := range states {
		states[i].Command = specs[states[i].Name].Command
	}
	return states, nil
}

func (m *Manager) runServiceScript(ctx context.Context, slug, container string, args []string) ([]byte, error) {
	argv := append([]string{"sh", "-c", scriptLoader, "litterbox-service"}, args...)
	stdin := strings.NewReader(strconv.Itoa(len(serviceScript)) + "\n" + serviceScript)
	var stdout, stderr bytes.Buffer
	res, err := m.Provider.Exec(ctx, container, dockercli.ExecSpec{Interactive: true, Cmd: argv},
		dockercli.Streams{Stdin: stdin, Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		return nil, m.execError(ctx, slug, err)
	}
	if res.ExitCode != 0 {
		return nil, fmt.Errorf("service control in sandbox '%s' exited with code %d: %s", slug, res.ExitCode, firstLine(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// parseServiceReport reads "SVC name state pid|- code|-" lines.
func parseServiceReport(out []byte) ([]ServiceState, error) {
	var states []ServiceState
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 5 || f[0] != "SVC" {
			return nil, fmt.Errorf("unexpected service report line %q", sc.Text())
		}
		s := ServiceState{Name: f[1], State: f[2], Log: ServiceLogDir + "/" + f[1] + ".log"}
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

// ServiceLogs writes a service's log (its last lines, when lines > 0) to w.
func (m *Manager) ServiceLogs(ctx context.Context, name, service string, lines int, w io.Writer) error {
	slug, err := m.resolve(name)
	if err != nil {
		return err
	}
	rec, err := m.store().load(slug)
	if err != nil {
		return err
	}
	if rec == nil {
		return m.missingOrNotFound(ctx, slug)
	}
	if _, err := pickServices(slug, rec.Services, "logs", service); err != nil {
		return err
	}
	out, err := m.runServiceScript(ctx, slug, m.Names(slug).Container, []string{"logs", strconv.Itoa(max(lines, 0)), service})
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}
