package kubecli

import (
	"context"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/runner"
)

// canI answers kubectl auth can-i as a cluster that refuses one verb:
// "no" with exit code 1, as kubectl does.
type canI struct{ refuse string }

func (c canI) Run(_ context.Context, cmd runner.Cmd) (runner.Result, error) {
	q := strings.Join(cmd.Args[len(cmd.Args)-2:], " ")
	if q == c.refuse {
		res := runner.Result{Stdout: []byte("no\n"), ExitCode: 1}
		return res, &runner.ExitError{Cmd: cmd, Result: res}
	}
	return runner.Result{Stdout: []byte("yes\n")}, nil
}

func TestMissingNamesTheRefusedVerb(t *testing.T) {
	c := New("kubectl", "", "ns", canI{refuse: "create pods/exec"})
	missing, err := c.Missing(context.Background())
	if err != nil || len(missing) != 1 || missing[0] != (Access{"create", "pods/exec"}) {
		t.Fatalf("missing %v, %v", missing, err)
	}
	if all, _ := New("kubectl", "", "", canI{}).Missing(context.Background()); len(all) != 0 {
		t.Fatalf("nothing refused, yet missing %v", all)
	}
}
