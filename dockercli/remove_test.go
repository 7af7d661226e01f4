package dockercli

import (
	"context"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/runner"
)

// rmRunner fails the first rm with exit code code, as Podman does for a
// container still running after its kill, and records every command.
type rmRunner struct {
	code  int
	lines []string
}

func (r *rmRunner) Run(_ context.Context, c runner.Cmd) (runner.Result, error) {
	r.lines = append(r.lines, strings.Join(c.Argv(), " "))
	if len(r.lines) == 1 {
		res := runner.Result{ExitCode: r.code, Stderr: []byte("level=warning msg=\"StopSignal SIGTERM failed to stop container x in 10 seconds, resorting to SIGKILL\"\n")}
		return res, &runner.ExitError{Cmd: c, Result: res}
	}
	return runner.Result{}, nil
}

// Podman's rm that finds the container still running after the kill is
// tried once more; Docker's and Podman's other failures are not.
func TestRemoveTriesPodmanOnceMore(t *testing.T) {
	for _, tc := range []struct {
		bin     string
		code    int
		calls   int
		wantErr bool
	}{{"podman", 2, 2, false}, {"podman", 125, 1, true}, {"docker", 2, 1, true}} {
		r := &rmRunner{code: tc.code}
		err := New(tc.bin, r).Remove(context.Background(), "x")
		if len(r.lines) != tc.calls || (err != nil) != tc.wantErr {
			t.Errorf("%s exit %d: %d commands %q, error %v", tc.bin, tc.code, len(r.lines), r.lines, err)
		}
	}
}
