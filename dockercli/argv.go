package dockercli

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/box"
)

// Flavor is which docker-compatible CLI a client drives; the argv differs
// only where the two CLIs truly do.
type Flavor string

// Flavors.
const (
	Docker Flavor = "docker"
	Podman Flavor = "podman"
)

// FlavorOf tells the flavor from the binary's name.
func FlavorOf(bin string) Flavor {
	if strings.Contains(path.Base(bin), "podman") {
		return Podman
	}
	return Docker
}

// RunArgs builds `docker run -d` for spec. Map-valued options are emitted in
// sorted order so the argv is stable (logs, transcripts). Podman has no
// volume labels in --mount, so its volumes go unlabelled.
func RunArgs(s box.Spec, f Flavor) []string {
	return containerArgs([]string{"run", "-d"}, s, f)
}

// CreateArgs builds `docker create` for spec: a container made but not
// started, so files can be copied into its volumes before its PID 1 runs.
func CreateArgs(s box.Spec, f Flavor) []string {
	return containerArgs([]string{"create"}, s, f)
}

func containerArgs(a []string, s box.Spec, f Flavor) []string {
	a = append(a, "--name", s.Name)
	if s.Isolation != nil {
		a = append(a, "--runtime", s.Isolation.Runtime)
	}
	if s.Hostname != "" {
		a = append(a, "--hostname", s.Hostname)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Labels)) {
		a = append(a, "--label", k+"="+s.Labels[k])
	}
	if s.User != "" {
		a = append(a, "--user", s.User)
	}
	if s.ReadOnly {
		a = append(a, "--read-only")
	}
	for _, p := range slices.Sorted(maps.Keys(s.Tmpfs)) {
		v := p
		if o := s.Tmpfs[p]; o != "" {
			v += ":" + o
		}
		a = append(a, "--tmpfs", v)
	}
	for _, v := range s.Volumes {
		m := "type=volume,source=" + v.Volume + ",target=" + v.Target
		if f != Podman {
			for _, k := range slices.Sorted(maps.Keys(s.VolumeLabels)) {
				m += "," + mountField("volume-label="+k+"="+s.VolumeLabels[k])
			}
		}
		a = append(a, "--mount", m)
	}
	for _, v := range s.AnonVolumes {
		a = append(a, "--volume", v)
	}
	for _, c := range s.VolumesFrom {
		a = append(a, "--volumes-from", c)
	}
	for _, v := range s.Shared {
		m := "type=volume,source=" + v.Volume + ",target=" + v.Target
		if v.ReadOnly {
			m += ",readonly"
		}
		a = append(a, "--mount", m)
	}
	if s.Workdir != "" {
		a = append(a, "--workdir", s.Workdir)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		a = append(a, "--env", k+"="+s.Env[k])
	}
	for _, c := range s.CapDrop {
		a = append(a, "--cap-drop", c)
	}
	for _, c := range s.CapAdd {
		a = append(a, "--cap-add", c)
	}
	for _, o := range s.SecurityOpt {
		a = append(a, "--security-opt", o)
	}
	pids, ulimits := s.PidsLimit, s.Ulimits
	if s.Isolation != nil && pids > 0 {
		pids, ulimits = gvisorPids(pids, ulimits)
	}
	if pids > 0 {
		a = append(a, "--pids-limit", strconv.Itoa(pids))
	}
	for _, k := range slices.Sorted(maps.Keys(ulimits)) {
		a = append(a, "--ulimit", k+"="+ulimits[k])
	}
	if s.Memory != "" {
		a = append(a, "--memory", s.Memory)
	}
	if s.CPUs != "" {
		a = append(a, "--cpus", s.CPUs)
	}
	if s.Network != "" {
		a = append(a, "--network", s.Network)
	}
	if s.LogMax != "" {
		a = append(a, "--log-driver", "json-file", "--log-opt", "max-size="+s.LogMax, "--log-opt", "max-file=2")
	}
	for _, p := range s.Publish {
		a = append(a, "--publish", fmt.Sprintf("%s:%d:%d", p.HostIP, p.HostPort, p.ContainerPort))
	}
	if s.OpenStdin {
		a = append(a, "--interactive")
	}
	if s.Entrypoint != "" {
		a = append(a, "--entrypoint", s.Entrypoint)
	}
	a = append(a, s.Image)
	return append(a, s.Cmd...)
}

// ExecArgs builds `docker exec` for container.
func ExecArgs(container string, s box.ExecSpec) []string {
	a := []string{"exec"}
	if s.Interactive {
		a = append(a, "-i")
	}
	if s.TTY {
		a = append(a, "-t")
	}
	if s.Detach {
		a = append(a, "-d")
	}
	if s.User != "" {
		a = append(a, "--user", s.User)
	}
	if s.Workdir != "" {
		a = append(a, "--workdir", s.Workdir)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		a = append(a, "--env", k+"="+s.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Secrets)) {
		a = append(a, "--env", k)
	}
	a = append(a, container)
	return append(a, s.Cmd...)
}

// CopyInArgs builds `docker cp - container:dir`, which extracts a tar stream
// read from stdin into dir.
func CopyInArgs(container, dir string) []string {
	return []string{"cp", "-", container + ":" + dir}
}

// psFormat makes `docker ps` print one JSON object per container. Labels are
// asked for one by one: the combined .Labels string is ambiguous when a value
// (a repo path) contains a comma.
func psFormat(labels []string) string {
	var b strings.Builder
	b.WriteString(`{"id":{{json .ID}},"name":{{json .Names}},"state":{{json .State}},"status":{{json .Status}},"created":{{json .CreatedAt}},"labels":{`)
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `%q:{{json (.Label %q)}}`, l, l)
	}
	b.WriteString("}}")
	return b.String()
}

// PsArgs builds `docker ps -a` filtered by labels (key=value, or key alone).
// Podman's templates have neither .Label nor a raw state, so podman gives
// its own JSON instead.
func PsArgs(filters map[string]string, labels []string, f Flavor) []string {
	a := []string{"ps", "-a", "--no-trunc"}
	for _, k := range slices.Sorted(maps.Keys(filters)) {
		f := "label=" + k
		if v := filters[k]; v != "" {
			f += "=" + v
		}
		a = append(a, "--filter", f)
	}
	if f == Podman {
		return append(a, "--format", "json")
	}
	return append(a, "--format", psFormat(labels))
}

// mountField quotes one field of --mount's value, which docker reads as a
// CSV record: a repository path with a comma in a volume label would
// otherwise split into a field docker refuses.
func mountField(f string) string {
	if !strings.ContainsAny(f, ",\"\n\r") {
		return f
	}
	return `"` + strings.ReplaceAll(f, `"`, `""`) + `"`
}
