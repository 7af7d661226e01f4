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

// script answers kubectl commands by their first words.
type script map[string]runner.Result

func (s script) Run(_ context.Context, cmd runner.Cmd) (runner.Result, error) {
	for prefix, res := range s {
		if strings.HasPrefix(strings.Join(cmd.Args, " "), prefix) {
			if res.ExitCode != 0 {
				return res, &runner.ExitError{Cmd: cmd, Result: res}
			}
			return res, nil
		}
	}
	res := runner.Result{ExitCode: 1, Stderr: []byte("unexpected: " + strings.Join(cmd.Args, " "))}
	return res, &runner.ExitError{Cmd: cmd, Result: res}
}

func TestNoStorageClassMeansEmptyDirAndNoPause(t *testing.T) {
	c := New("kubectl", "", "", script{
		"get storageclass": {Stdout: []byte(`{"items":[{"metadata":{"name":"slow"}}]}`)},
		"get configmap/box pod/box": {Stdout: []byte(`{"items":[
			{"kind":"ConfigMap","metadata":{"name":"box","annotations":{"dev.litterbox.storage":"emptyDir"}}},
			{"kind":"Pod","metadata":{"name":"box"},"status":{"phase":"Running","containerStatuses":[{"state":{"running":{}}}]}}]}`)},
	})
	if class, err := c.StorageClass(context.Background()); class != "" || err != nil {
		t.Fatalf("a class that is not the default: %q %v", class, err)
	}
	if s := c.Storage(context.Background()); !strings.HasPrefix(s, "emptyDir") {
		t.Errorf("storage %q", s)
	}
	err := c.Pause(context.Background(), "box")
	if err == nil || !strings.Contains(err.Error(), "emptyDir") || !strings.Contains(err.Error(), "delete the sandbox instead") {
		t.Errorf("pause of an emptyDir sandbox: %v", err)
	}
}
