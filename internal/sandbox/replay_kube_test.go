package sandbox

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// TestReplayKubernetes walks a sandbox's life on the Kubernetes provider
// over a transcript of the real test cluster (re-record with the cluster
// up: scripts/k8s/with-cluster.sh go test ./sandbox -run ReplayKubernetes
// -record): create (record, claim, policy, pod, the helper delivered with
// the image's shell, the tree untarred by the helper), a changing bash, a
// write, a stop by pause, the listing, a resume into a new pod, and delete.
func TestReplayKubernetes(t *testing.T) {
	ctx := context.Background()
	dir := testenv.ReplayRepo(t, "replayrepo")
	r := testenv.Transcript(t, filepath.Join("testdata", "kubernetes.json"), runner.Subst{dir: "$REPO"})
	if err := layout.PinRepoID(filepath.Join(dir, ".git"), replayID); err != nil {
		t.Fatal(err)
	}
	m, err := Open(ctx, r, engine.Kubectl("", ""), dir, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	m.Repo.Config.CPUs = "2"
	m.Agent.PinHelper(testenv.ReplayHelper(t), "replay")
	m.Repo.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }

	c, err := m.Create(ctx, create.CreateOptions{Name: "kube"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != create.StatusActive || c.Setup.Stdout != "hello world\n" || c.Storage != "PersistentVolumeClaim of storage class litterbox-local" {
		t.Fatalf("create: %+v", c)
	}
	res, err := m.Agent.Bash(ctx, "kube", agent.BashOptions{Command: "id -u; echo new > new.txt"})
	if err != nil || res.Stdout != "1000\n" || res.Snapshot == "" {
		t.Fatalf("bash: %+v %v", res, err)
	}
	if w, err := m.Agent.Write(ctx, "kube", "w.txt", []byte("w\n")); err != nil || w.Snapshot == "" {
		t.Fatalf("write: %+v %v", w, err)
	}
	if o, err := m.Pause(ctx, "kube"); err != nil || o.Status != create.StatusStopped {
		t.Fatalf("pause: %+v %v", o, err)
	}
	if list, err := m.List(ctx, false); err != nil || len(list) != 1 || list[0].Status != create.StatusStopped {
		t.Fatalf("list after pause: %+v %v", list, err)
	}
	if o, err := m.Resume(ctx, "kube"); err != nil || o.Status != create.StatusActive {
		t.Fatalf("resume: %+v %v", o, err)
	}
	res, err = m.Agent.Bash(ctx, "kube", agent.BashOptions{Command: "cat new.txt w.txt"})
	if err != nil || res.Stdout != "new\nw\n" {
		t.Fatalf("after resume: %+v %v", res, err)
	}
	if _, err := m.Delete(ctx, "kube", true); err != nil {
		t.Fatal(err)
	}
}
