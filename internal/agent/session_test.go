//go:build linux

package agent_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/milestone"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/sandbox/sandboxtest"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// A person's exec streams its output and commits nothing; a scan after it
// commits what it changed, titled by the caller.
func TestExecThenScan(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	var out, errOut bytes.Buffer
	code, err := m.Agent.Exec(ctx, "work", agent.ExecOptions{Cmd: []string{"sh", "-c", "echo out; echo err >&2; echo made > made.txt; exit 3"}, Streams: box.Streams{Stdout: &out, Stderr: &errOut}})
	if err != nil || code != 3 || out.String() != "out\n" || errOut.String() != "err\n" {
		t.Fatalf("exec: code %d, %v, stdout %q, stderr %q", code, err, out.String(), errOut.String())
	}
	if strings.Contains(tree(t, m), "made.txt") {
		t.Error("exec committed by itself")
	}
	res, err := m.Agent.Scan(ctx, "work", "shell", "a person's session")
	if err != nil || res.Snapshot == "" || show(t, m, "made.txt") != "made" {
		t.Fatalf("scan: %+v %v", res, err)
	}
	if _, err := m.Agent.Exec(ctx, "nope", agent.ExecOptions{Cmd: []string{"true"}}); err == nil {
		t.Error("exec in an unknown sandbox")
	}
}

// run commits what the session changed, once it ends at the latest.
func TestRunCommitsWhatTheSessionChanged(t *testing.T) {
	m := toolSandbox(t)
	var seen []string
	res, err := m.Agent.Run(context.Background(), "work", agent.RunOptions{
		ExecOptions: agent.ExecOptions{Cmd: []string{"sh", "-c", "echo one > one.txt && echo two > two.txt"}},
		Quiet:       50 * time.Millisecond,
		Committed:   func(r *result.Act) { seen = append(seen, r.Snapshot) },
	})
	if err != nil || res.ExitCode != 0 || len(res.Commits) == 0 {
		t.Fatalf("run: %+v %v", res, err)
	}
	if show(t, m, "one.txt") != "one" || show(t, m, "two.txt") != "two" {
		t.Errorf("tree:\n%s", tree(t, m))
	}
	msg := lastMessage(t, m)
	if !strings.Contains(msg, "one.txt") || !strings.Contains(msg, "echo one") {
		t.Errorf("run commit message:\n%s", msg)
	}
	if len(seen) != len(res.Commits) {
		t.Errorf("told of %d commits, made %d", len(seen), len(res.Commits))
	}
}

// Upload commits what it brings, modes kept; download writes exactly dest.
func TestUploadAndDownload(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	host := t.TempDir()
	src := filepath.Join(host, "tool.sh")
	if err := os.WriteFile(src, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := m.Agent.Upload(ctx, "work", src, "bin/tool.sh")
	if err != nil || res.Snapshot == "" {
		t.Fatalf("upload: %+v %v", res, err)
	}
	if got := tree(t, m); !strings.Contains(got, "100755 bin/tool.sh") {
		t.Errorf("tree after upload:\n%s", got)
	}
	dest := filepath.Join(host, "out")
	n, err := m.Agent.Download(ctx, "work", "docs", dest)
	if err != nil || n == 0 {
		t.Fatalf("download: %d %v", n, err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "a b", "c.txt")); err != nil || len(b) == 0 {
		t.Errorf("downloaded file: %q %v", b, err)
	}
	if _, err := m.Agent.Upload(ctx, "work", filepath.Join(host, "missing"), "x"); err == nil || !strings.Contains(err.Error(), "upload source") {
		t.Errorf("missing source: %v", err)
	}
	if _, err := m.Agent.Download(ctx, "work", "/", filepath.Join(host, "root")); err == nil {
		t.Error("downloading the whole filesystem was allowed")
	}
}

// The diff since the base, and since the last milestone.
func TestDiffSinceBaseAndMilestone(t *testing.T) {
	m := toolSandbox(t)
	ctx := context.Background()
	bash(t, m, "echo one > one.txt")
	if _, err := milestone.Make(ctx, m.Repo, "work", "first"); err != nil {
		t.Fatal(err)
	}
	bash(t, m, "echo two > two.txt && rm README.md")
	all, err := milestone.DiffSince(ctx, m.Repo, "work", "base")
	if err != nil || len(all.Files) != 3 {
		t.Fatalf("since base: %+v %v", all, err)
	}
	last, err := milestone.DiffSince(ctx, m.Repo, "work", "milestone")
	if err != nil || len(last.Files) != 2 || last.Since != "milestone" {
		t.Fatalf("since milestone: %+v %v", last, err)
	}
	if !strings.Contains(last.Diff, "+two") || strings.Contains(last.Diff, "one.txt") || !strings.Contains(last.Stat(), "two.txt") {
		t.Errorf("diff since the milestone:\n%s\n%s", last.Stat(), last.Diff)
	}
}

// A call in a sandbox whose PID 1 ended it for being idle does nothing and
// says so (IdleError: sandbox.Sandbox starts it again and sends the call
// again); one stopped any other way is plainly not running.
func TestIdleSandboxIsToldApart(t *testing.T) {
	m, p := sandboxtest.Sandbox(t, "work", nil)
	ctx := context.Background()
	c := m.Repo.Names("work").Container
	if err := p.Stop(c, protocol.IdleExit); err != nil {
		t.Fatal(err)
	}
	_, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "echo awake > awake.txt"})
	if !errorAs[*agent.IdleError](err) || !errorAs[*agent.NotRunningError](err) {
		t.Fatalf("call after an idle stop: %v, want an IdleError", err)
	}
	if _, err := m.Agent.Exec(ctx, "work", agent.ExecOptions{Cmd: []string{"true"}}); !errorAs[*agent.IdleError](err) {
		t.Errorf("exec after an idle stop: %v, want an IdleError", err)
	}
	if err := p.Start(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := p.Stop(c, 137); err != nil {
		t.Fatal(err)
	}
	_, err = m.Agent.Bash(ctx, "work", agent.BashOptions{Command: "true"})
	if !errorAs[*agent.NotRunningError](err) || errorAs[*agent.IdleError](err) {
		t.Errorf("call in a stopped sandbox: %v", err)
	}
}

// lastMessage is the message of the branch's tip.
func lastMessage(t *testing.T, m *sandbox.Manager) string {
	return testenv.Git(t, m.Repo.Root, "log", "-1", "--format=%B", "litterbox/work")
}
