package dockercli

import (
	"errors"
	"slices"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

func TestRunArgsIsStableAndComplete(t *testing.T) {
	spec := box.Spec{
		Name: "litterbox-r-x", Hostname: "x", Image: "busybox:latest",
		Labels:       map[string]string{"b": "2", "a": "1"},
		User:         "1000:1000",
		ReadOnly:     true,
		Tmpfs:        map[string]string{"/tmp": "rw,mode=1777"},
		Volumes:      []box.Mount{{Volume: "litterbox-r-x-src", Target: "/src"}},
		VolumeLabels: map[string]string{"dev.litterbox.managed": "true"},
		Workdir:      "/src",
		Env:          map[string]string{"HOME": "/tmp"},
		CapDrop:      []string{"ALL"},
		SecurityOpt:  []string{"no-new-privileges"},
		PidsLimit:    512, Memory: "2g", CPUs: "2", Network: "bridge",
		Publish:    []box.PortBinding{{HostIP: "127.0.0.1", HostPort: 3456, ContainerPort: 8080}, {HostIP: "127.0.0.1", HostPort: 3457, ContainerPort: 9090}},
		Entrypoint: "/bin/sh",
		Cmd:        []string{"-c", "sleep 1"},
	}
	want := []string{"run", "-d", "--name", "litterbox-r-x", "--hostname", "x",
		"--label", "a=1", "--label", "b=2", "--user", "1000:1000", "--read-only",
		"--tmpfs", "/tmp:rw,mode=1777",
		"--mount", "type=volume,source=litterbox-r-x-src,target=/src,volume-label=dev.litterbox.managed=true",
		"--workdir", "/src", "--env", "HOME=/tmp", "--cap-drop", "ALL",
		"--security-opt", "no-new-privileges", "--pids-limit", "512", "--memory", "2g",
		"--cpus", "2", "--network", "bridge",
		"--publish", "127.0.0.1:3456:8080", "--publish", "127.0.0.1:3457:9090",
		"--entrypoint", "/bin/sh",
		"busybox:latest", "-c", "sleep 1"}
	if got := RunArgs(spec, Docker); !slices.Equal(got, want) {
		t.Errorf("RunArgs:\n got %q\nwant %q", got, want)
	}
}

// Under gVisor the sandbox's processes are bounded by RLIMIT_NPROC, which
// gVisor's kernel enforces, and the engine's pids limit leaves room for
// gVisor's own threads.
func TestRunArgsPidsUnderGVisor(t *testing.T) {
	spec := box.Spec{Name: "c", Image: "i", PidsLimit: 128, Ulimits: map[string]string{"nofile": "1024:1024", "nproc": "9:9"}, Isolation: &box.Isolation{Runtime: "runsc"}}
	want := []string{"run", "-d", "--name", "c", "--runtime", "runsc", "--pids-limit", "2176", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=128:128", "i"}
	if got := RunArgs(spec, Podman); !slices.Equal(got, want) {
		t.Errorf("RunArgs:\n got %q\nwant %q", got, want)
	}
	if spec.Ulimits["nproc"] != "9:9" {
		t.Errorf("the spec's ulimits changed: %v", spec.Ulimits)
	}
	spec.PidsLimit = 0
	if got := RunArgs(spec, Docker); slices.Contains(got, "--pids-limit") || !slices.Contains(got, "nproc=9:9") {
		t.Errorf("no pids limit: %q", got)
	}
}

func TestExecArgs(t *testing.T) {
	got := ExecArgs("c", box.ExecSpec{User: "1000:1000", Workdir: "/src", Interactive: true, TTY: true, Env: map[string]string{"Z": "1", "A": "2"}, Cmd: []string{"sh", "-c", "echo hi"}})
	want := []string{"exec", "-i", "-t", "--user", "1000:1000", "--workdir", "/src", "--env", "A=2", "--env", "Z=1", "c", "sh", "-c", "echo hi"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestCopyInArgs(t *testing.T) {
	if got := CopyInArgs("c", "/src"); !slices.Equal(got, []string{"cp", "-", "c:/src"}) {
		t.Errorf("got %q", got)
	}
}

func TestPsArgsFiltersAndFormat(t *testing.T) {
	got := PsArgs(map[string]string{"dev.litterbox.repo": "/r", "dev.litterbox.managed": "true", "k": ""}, []string{"dev.litterbox.sandbox"}, Docker)
	want := []string{"ps", "-a", "--no-trunc",
		"--filter", "label=dev.litterbox.managed=true", "--filter", "label=dev.litterbox.repo=/r", "--filter", "label=k",
		"--format", `{"id":{{json .ID}},"name":{{json .Names}},"state":{{json .State}},"status":{{json .Status}},"created":{{json .CreatedAt}},"labels":{"dev.litterbox.sandbox":{{json (.Label "dev.litterbox.sandbox")}}}}`}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestParsePs(t *testing.T) {
	out := []byte(`{"id":"abc","name":"litterbox-r-x","state":"paused","status":"Up 2 minutes (Paused)","created":"2026-11-21 05:00:00 +0000 UTC","labels":{"dev.litterbox.repo":"/a,b"}}` + "\n\n")
	list, err := parsePs(out)
	if err != nil || len(list) != 1 {
		t.Fatalf("parsePs: %v %v", list, err)
	}
	if list[0].State != "paused" || list[0].Labels["dev.litterbox.repo"] != "/a,b" {
		t.Errorf("parsed %+v", list[0])
	}
	if _, err := parsePs([]byte("not json\n")); err == nil {
		t.Error("garbage accepted")
	}
}

func TestClassify(t *testing.T) {
	for stderr, kind := range map[string]error{
		"Error response from daemon: No such container: litterbox-x":                                             box.ErrNotFound,
		"Error: No such object: litterbox-x":                                                                     box.ErrNotFound,
		"Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?":      box.ErrEngineUnreachable,
		"error during connect: Get \"http://127.0.0.1:1/v1.24/containers/json\": dial tcp":                       box.ErrEngineUnreachable,
		"Unable to find image 'nope:latest' locally\ndocker: Error response from daemon: pull access denied":     box.ErrImageNotFound,
		"docker: Error response from daemon: Conflict. The container name \"/x\" is already in use by container": box.ErrNameInUse,
		"Error response from daemon: Container abc is already paused":                                            box.ErrAlreadyPaused,
		"Error response from daemon: Container abc is not paused":                                                box.ErrNotPaused,
		"Error response from daemon: Container abc is not running":                                               box.ErrNotRunning,
		"Error: No such volume: v": box.ErrNoSuchVolume,
		"docker: Error response from daemon: driver failed programming external connectivity on endpoint pt2 (c270): Bind for 127.0.0.1:3999 failed: port is already allocated":                               box.ErrPortInUse,
		"docker: Error response from daemon: driver failed programming external connectivity on endpoint pt4 (aa88): Error starting userland proxy: listen tcp4 127.0.0.1:3998: bind: address already in use": box.ErrPortInUse,
		"docker: Error response from daemon: network nonet not found": box.ErrNoSuchNetwork,
	} {
		err := Classify(&runner.ExitError{Result: runner.Result{ExitCode: 1, Stderr: []byte(stderr)}})
		if !errors.Is(err, kind) {
			t.Errorf("%q classified as %v, want %v", stderr, err, kind)
		}
	}
	plain := &runner.ExitError{Result: runner.Result{ExitCode: 1, Stderr: []byte("something else")}}
	if Classify(plain) != error(plain) {
		t.Error("unknown failure was rewrapped")
	}
	missing := Classify(&runner.StartError{Err: runner.ErrNotFound})
	if !errors.Is(missing, box.ErrBinaryMissing) {
		t.Errorf("missing binary classified as %v", missing)
	}
}

// The shape of `podman ps --format json` (podman 4.3, trimmed).
func TestParsePodmanPs(t *testing.T) {
	out := []byte(`[{"AutoRemove":false,"Command":["-c","sleep"],"Created":1795248252,"CreatedAt":"6 seconds ago","Id":"26fbb3a7","Image":"localhost/busybox:latest",
		"Labels":{"dev.litterbox.managed":"true","dev.litterbox.sandbox":"box","other":"x"},"Names":["litterbox-r-box"],"State":"running","Status":"Up 6 seconds ago"}]`)
	list, err := parsePodmanPs(out, []string{"dev.litterbox.sandbox", "dev.litterbox.base"})
	if err != nil || len(list) != 1 {
		t.Fatalf("%+v %v", list, err)
	}
	c := list[0]
	if c.ID != "26fbb3a7" || c.Name != "litterbox-r-box" || c.State != "running" || c.Created == "" {
		t.Errorf("got %+v", c)
	}
	if len(c.Labels) != 2 || c.Labels["dev.litterbox.sandbox"] != "box" || c.Labels["dev.litterbox.base"] != "" {
		t.Errorf("labels %v: want exactly the ones asked for", c.Labels)
	}
	if _, err := parsePodmanPs([]byte("not json"), nil); err == nil {
		t.Error("garbage accepted")
	}
}

// The build's context is stdin ("-", last), never a directory of this
// machine, and its network is the one asked for.
func TestBuildArgs(t *testing.T) {
	got := BuildArgs(box.BuildSpec{Dockerfile: "docker/Dockerfile", Tag: "t:1", Target: "dev", Network: "none", Args: map[string]string{"B": "2", "A": "1"}, Labels: map[string]string{"l": "v"}})
	want := []string{"build", "--force-rm", "--file", "docker/Dockerfile", "--tag", "t:1", "--network", "none", "--target", "dev", "--build-arg", "A=1", "--build-arg", "B=2", "--label", "l=v", "-"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := BuildArgs(box.BuildSpec{Dockerfile: "Dockerfile", Tag: "t"}); !slices.Equal(got, []string{"build", "--force-rm", "--file", "Dockerfile", "--tag", "t", "-"}) {
		t.Errorf("no network, target or args: got %q", got)
	}
}

// A volume label holding a comma or a quote (a repository path) is one
// quoted CSV field of --mount, as docker reads it.
func TestMountFieldQuotesCommas(t *testing.T) {
	spec := box.Spec{Name: "c", Image: "i", Volumes: []box.Mount{{Volume: "v", Target: "/src"}}, VolumeLabels: map[string]string{"dev.litterbox.repo": `/tmp/a,b "c"`}}
	want := `type=volume,source=v,target=/src,"volume-label=dev.litterbox.repo=/tmp/a,b ""c"""`
	if got := RunArgs(spec, Docker); !slices.Contains(got, want) {
		t.Errorf("RunArgs: %q, want --mount %s", got, want)
	}
}
