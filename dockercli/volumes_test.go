package dockercli

import (
	"context"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/runner"
)

// labelsRunner answers volume ls as an engine holding vols (name ->
// labels) would, ORing its label filters as Podman's does.
type labelsRunner struct {
	vols  map[string]map[string]string
	lines []string
}

func (r *labelsRunner) Run(_ context.Context, c runner.Cmd) (runner.Result, error) {
	a := c.Argv()
	r.lines = append(r.lines, strings.Join(a, " "))
	var out strings.Builder
	for name, labels := range r.vols {
		for i := 0; i+1 < len(a); i++ {
			k, v, _ := strings.Cut(strings.TrimPrefix(a[i+1], "label="), "=")
			if a[i] == "--filter" && labels[k] == v {
				out.WriteString(name + "\n")
				break
			}
		}
	}
	return runner.Result{Stdout: []byte(out.String())}, nil
}

// Podman's volume ls ORs its label filters: a volume must carry every
// label asked for all the same (one of another repository's, or the
// cache entry itself, once came back as a sandbox's).
func TestVolumesOnPodmanCarryEveryLabel(t *testing.T) {
	r := &labelsRunner{vols: map[string]map[string]string{
		"mine":   {"repo": "a", "role": "base"},
		"theirs": {"repo": "b", "role": "base"},
		"box":    {"repo": "a", "role": "true"},
	}}
	got, err := New("podman", r).Volumes(context.Background(), map[string]string{"repo": "a", "role": "base"})
	if err != nil || strings.Join(got, ",") != "mine" {
		t.Errorf("podman: %q %v, want mine alone (commands %q)", got, err, r.lines)
	}
	// Docker ANDs them itself: one command.
	r.lines = nil
	if _, err := New("docker", r).Volumes(context.Background(), map[string]string{"repo": "a", "role": "base"}); err != nil || len(r.lines) != 1 {
		t.Errorf("docker: %d commands %q %v, want one", len(r.lines), r.lines, err)
	}
}
