package kubecli

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

func TestPodManifestHardening(t *testing.T) {
	spec := box.Spec{
		Name: "litterbox-repo-abc-box", Hostname: "box", Image: "busybox:latest", User: "1000:1000", ReadOnly: true,
		Labels:  map[string]string{"dev.litterbox.managed": "true", "dev.litterbox.repo": "/home/me/my repo"},
		Tmpfs:   map[string]string{"/tmp": "rw,exec"},
		Volumes: []box.Mount{{Volume: "litterbox-repo-abc-box-src", Target: "/src"}}, AnonVolumes: []string{"/.litterbox"},
		Workdir: "/src", Env: map[string]string{"HOME": "/tmp"}, Memory: "2g", CPUs: "2", Network: "none",
		Publish:    []box.PortBinding{{HostIP: "127.0.0.1", HostPort: 3000, ContainerPort: 8080}},
		Entrypoint: "/.litterbox/id/litterbox-helper", Cmd: []string{"init"},
	}
	pod, err := podManifest(spec, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(pod)
	var got struct {
		Metadata meta
		Spec     struct {
			AutomountServiceAccountToken *bool
			SecurityContext              struct {
				RunAsNonRoot   bool
				RunAsUser      int
				SeccompProfile struct{ Type string }
			}
			Containers []struct {
				Command         []string
				SecurityContext struct {
					AllowPrivilegeEscalation *bool
					ReadOnlyRootFilesystem   bool
					Capabilities             struct{ Drop []string }
				}
				Resources struct{ Limits, Requests map[string]string }
				Ports     []struct{ ContainerPort int }
			}
			Volumes []map[string]json.RawMessage
		}
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	sc := got.Spec.SecurityContext
	c := got.Spec.Containers[0]
	switch {
	case got.Spec.AutomountServiceAccountToken == nil || *got.Spec.AutomountServiceAccountToken:
		t.Error("service account token mounted")
	case !sc.RunAsNonRoot || sc.RunAsUser != 1000 || sc.SeccompProfile.Type != "RuntimeDefault":
		t.Errorf("pod securityContext %+v", sc)
	case c.SecurityContext.AllowPrivilegeEscalation == nil || *c.SecurityContext.AllowPrivilegeEscalation || !c.SecurityContext.ReadOnlyRootFilesystem || strings.Join(c.SecurityContext.Capabilities.Drop, ",") != "ALL":
		t.Errorf("container securityContext %+v", c.SecurityContext)
	case c.Resources.Limits["memory"] != "2Gi" || c.Resources.Limits["cpu"] != "2":
		t.Errorf("limits %v", c.Resources.Limits)
	case c.Resources.Requests["memory"] != "0" || c.Resources.Requests["cpu"] != "0":
		// Requests default to the limits, and two 2-CPU sandboxes would
		// not fit a 2-core node.
		t.Errorf("requests %v", c.Resources.Requests)
	case len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080:
		t.Errorf("ports %+v", c.Ports)
	case c.Command[len(c.Command)-2] != spec.Entrypoint || c.Command[len(c.Command)-1] != "init":
		t.Errorf("command %q", c.Command)
	case got.Metadata.Labels["dev.litterbox.repo"] != "" || got.Metadata.Annotations["dev.litterbox.repo"] != "/home/me/my repo":
		t.Errorf("a path is no label value: labels %v annotations %v", got.Metadata.Labels, got.Metadata.Annotations)
	case got.Metadata.Labels["dev.litterbox.managed"] != "true" || got.Metadata.Labels[labelPod] != podLabel(spec.Name):
		t.Errorf("labels %v", got.Metadata.Labels)
	}
	if strings.Contains(string(data), "hostPath") {
		t.Error("a hostPath volume")
	}
	if !strings.Contains(string(data), `"claimName":"litterbox-repo-abc-box-src"`) {
		t.Errorf("no claim in %s", data)
	}
	noClaim, _ := podManifest(spec, false, nil)
	if d, _ := json.Marshal(noClaim); strings.Contains(string(d), "claimName") {
		t.Error("claim without a storage class")
	}
}

func TestPodManifestRefuses(t *testing.T) {
	base := box.Spec{Name: "x", Image: "i", Entrypoint: "/h"}
	for name, tc := range map[string]struct {
		mod  func(*box.Spec)
		want string
	}{
		"root":        {func(s *box.Spec) { s.User = "0:0" }, "non-root"},
		"named user":  {func(s *box.Spec) { s.User = "node" }, "numeric uid:gid"},
		"bad memory":  {func(s *box.Spec) { s.Memory = "lots" }, "memory"},
		"host net":    {func(s *box.Spec) { s.Network = "host" }, `network "host"`},
		"shared vols": {func(s *box.Spec) { s.VolumesFrom = []string{"y"} }, "shared"},
	} {
		s := base
		tc.mod(&s)
		_, err := podManifest(s, true, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
	s := base
	s.Network = "host"
	if _, err := podManifest(s, true, nil); !errors.Is(err, box.ErrUnsupported) {
		t.Errorf("host network: %v is not box.ErrUnsupported", err)
	}
}

func TestQuantity(t *testing.T) {
	for in, want := range map[string]string{"512m": "512Mi", "2g": "2Gi", "2G": "2Gi", "1073741824": "1073741824", "100k": "100Ki", "7b": "7"} {
		if got, err := quantity(in); err != nil || got != want {
			t.Errorf("quantity(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "g", "1.5g", "-1m"} {
		if _, err := quantity(bad); err == nil {
			t.Errorf("quantity(%q) took it", bad)
		}
	}
}

func TestStateOf(t *testing.T) {
	pod := func(js string) *podObject {
		var p podObject
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			t.Fatal(err)
		}
		return &p
	}
	for want, p := range map[box.State]*podObject{
		"exited":   nil,
		"created":  pod(`{"status":{"phase":"Pending"}}`),
		"running":  pod(`{"status":{"phase":"Running","containerStatuses":[{"state":{"running":{}}}]}}`),
		"removing": pod(`{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"},"status":{"phase":"Running"}}`),
	} {
		if got := stateOf(p); got != want {
			t.Errorf("stateOf = %s, want %s", got, want)
		}
	}
	idle := pod(`{"status":{"phase":"Failed","containerStatuses":[{"state":{"terminated":{"reason":"Error","exitCode":75}}}]}}`)
	if code, ok := exitCode(idle); stateOf(idle) != "exited" || !ok || code != 75 || statusLine(idle) != "Exited (75)" {
		t.Errorf("a pod whose PID 1 exited 75: %s %d %v %q", stateOf(idle), code, ok, statusLine(idle))
	}
	if statusLine(nil) != "exited" {
		t.Errorf("no pod: %q", statusLine(nil))
	}
	noShell := pod(`{"status":{"phase":"Failed","containerStatuses":[{"state":{"terminated":{"reason":"StartError","message":"exec: \"/bin/sh\": stat /bin/sh: no such file or directory","exitCode":128}}}]}}`)
	if why := podFailure(noShell); !strings.Contains(why, "has no /bin/sh") {
		t.Errorf("no shell: %q", why)
	}
	pull := pod(`{"status":{"phase":"Pending","containerStatuses":[{"state":{"waiting":{"reason":"ErrImageNeverPull","message":"not present"}}}]}}`)
	if why := podFailure(pull); !strings.Contains(why, "cannot be pulled") {
		t.Errorf("pull: %q", why)
	}
	if why := podFailure(pod(`{"status":{"phase":"Pending","containerStatuses":[{"state":{"waiting":{"reason":"ContainerCreating"}}}]}}`)); why != "" {
		t.Errorf("creating is no failure: %q", why)
	}
}

func TestStderrFilterDropsKubectlsExitLine(t *testing.T) {
	var out strings.Builder
	f := &stderrFilter{w: &out}
	for _, chunk := range []string{"err", "or one\ncommand terminated with exit code 3\n", "tail"} {
		_, _ = f.Write([]byte(chunk))
	}
	f.flush()
	if out.String() != "error one\ntail" || !f.exited || f.last != "tail" {
		t.Errorf("out %q exited %v last %q", out.String(), f.exited, f.last)
	}
	g := &stderrFilter{}
	_, _ = g.Write([]byte("Error from server (NotFound): pods \"x\" not found\n"))
	g.flush()
	if g.exited || g.kept.String() == "" || !strings.HasPrefix(g.last, "Error from server") {
		t.Errorf("kubectl's own error: %+v", g)
	}
}

func TestWrappedExecKeepsValuesOutOfArgvAndKey(t *testing.T) {
	c := New("kubectl", "ctx", "ns", nil)
	cmd, shown := c.execCmd("pod", box.ExecSpec{Cmd: []string{"sh", "-c", "echo"}, Workdir: "/src", Env: map[string]string{"A": "1"}, Secrets: map[string]string{"TOKEN": "s3cret"}}, strings.NewReader("rest"))
	if shown == nil {
		t.Fatal("no shown command")
	}
	argv := strings.Join(cmd.Args, " ")
	if strings.Contains(argv, "s3cret") || !strings.Contains(argv, helperLink+" with-env 0 /src 1 A=1 -- sh -c echo") || !strings.Contains(argv, "exec -i pod --container sandbox --") {
		t.Errorf("argv %q", argv)
	}
	buf := new(strings.Builder)
	data := make([]byte, 100)
	for {
		n, err := cmd.Stdin.Read(data)
		buf.WriteString(string(data[:n]))
		if err != nil {
			break
		}
	}
	if buf.String() != "13\nTOKEN=s3cret\x00rest" {
		t.Errorf("stdin %q", buf.String())
	}
	if k := cmd.StdinKey([]byte(buf.String())); strings.Contains(k, "s3cret") || !strings.Contains(k, "TOKEN") {
		t.Errorf("stdin key %q", k)
	}
	// A terminal session's environment is no secret: in the argv, so
	// nothing but the terminal is on stdin.
	tty, _ := c.execCmd("pod", box.ExecSpec{TTY: true, Interactive: true, Cmd: []string{"sh"}, Workdir: "/src", Env: map[string]string{"LITTERBOX_SESSION": "x"}}, os.Stdin)
	if strings.Join(tty.Args, " ") != "exec -i -t pod --container sandbox -- "+helperLink+" with-env 0 /src 0 LITTERBOX_SESSION=x -- sh" || tty.Stdin != os.Stdin {
		t.Errorf("terminal exec %q", tty.Args)
	}
	plain, shown := c.execCmd("pod", box.ExecSpec{Cmd: []string{"true"}}, nil)
	if shown != nil || strings.Join(plain.Args, " ") != "exec pod --container sandbox -- true" {
		t.Errorf("plain exec %q", plain.Args)
	}
}

func TestClassify(t *testing.T) {
	for msg, want := range map[string]error{
		`Error from server (NotFound): pods "x" not found`:                                                  errNotFound,
		`Error from server (AlreadyExists): configmaps "x" already exists`:                                  box.ErrNameInUse,
		`The connection to the server 127.0.0.1:6443 was refused - did you specify the right host or port?`: box.ErrEngineUnreachable,
		`error: context "nope" does not exist`:                                                              nil,
		`Unable to connect to the server: dial tcp: i/o timeout`:                                            box.ErrEngineUnreachable,
		`error: context was not found for specified context: nope`:                                          box.ErrEngineUnreachable,
	} {
		err := classify(exitErr(msg))
		if want != nil && !errors.Is(err, want) {
			t.Errorf("%q: %v, want %v", msg, err, want)
		}
	}
}

func exitErr(stderr string) error {
	return &runner.ExitError{Cmd: runner.Cmd{Name: "kubectl"}, Result: runner.Result{ExitCode: 1, Stderr: []byte(stderr)}}
}

// kubectl's refusals of an exec into a pod that is not running are
// docker's "not running", so a stopped sandbox is told as one (and an idle
// one woken).
func TestExecErrorNotRunning(t *testing.T) {
	for _, msg := range []string{
		`error: cannot exec into a container in a completed pod; current phase is Failed`,
		`error: unable to upgrade connection: container not found ("sandbox")`,
	} {
		if err := execError("p", classify(exitErr(msg))); !errors.Is(err, box.ErrNotRunning) {
			t.Errorf("%q: %v", msg, err)
		}
	}
}
