//go:build integration

package sandbox

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// A process that makes itself a subreaper (prctl PR_SET_CHILD_SUBREAPER)
// keeps the orphans of its own tree from PID 1; it and they are still the
// call's, and dead when the call returns.
func TestIntegrationSubreaperEscapee(t *testing.T) {
	m := matrixSandbox(t, "litterbox-test/python:bookworm", testenv.Files{"README.md": "hi\n"})
	e := &attackEnv{m: m}
	script := `import ctypes, os, time
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
if os.fork() == 0:
    if os.fork() == 0:
        os.execv("/bin/sh", ["/bin/sh", "/tmp/lbx-sr.sh"])
    os._exit(0)
time.sleep(1000)
`
	res := bash(t, m, looper("sr")+"printf '%s' '"+script+"' > /tmp/lbx-sr.py; "+
		"setsid env -i /usr/bin/python3 /tmp/lbx-sr.py >/dev/null 2>&1 </dev/null & sleep 1; "+
		"for f in $(grep -l 'lbx-s[r].sh' /proc/[0-9]*/cmdline); do d=${f%/cmdline}; set -- $(sed 's/.*) //' $d/stat); cat /proc/$2/comm; done")
	if !strings.Contains(res.Stdout, "python3") {
		t.Fatalf("the looper's parent is not the subreaper: %+v", res)
	}
	noLooper(t, e, "sr")
	if n := loopers(t, e, "sr[.]py"); n != 0 {
		t.Errorf("%d subreaper(s) still run", n)
	}
}

// A pipe end the kill cannot reach (another exec's process opened the
// call's stdout through /proc) holds the call only for the drain's bound,
// and that other exec's process is not killed.
func TestIntegrationOutputHeldByAnotherExec(t *testing.T) {
	m := matrixSandbox(t, "busybox:latest", testenv.Files{"README.md": "hi\n"})
	hctx, stopHuman := context.WithCancel(context.Background())
	defer stopHuman()
	human := make(chan error, 1)
	go func() {
		var out strings.Builder
		_, err := m.Agent.Exec(hctx, "work", agent.ExecOptions{Cmd: []string{"sh", "-c",
			looper("hum") + "while [ ! -s /tmp/lbx-pipe ]; do sleep 0.1; done; exec 3>/proc/$(cat /tmp/lbx-pipe)/fd/1; /bin/sh /tmp/lbx-hum.sh"},
			Streams: box.Streams{Stdout: &out, Stderr: &out}})
		human <- err
	}()
	t0 := time.Now()
	res, err := m.Agent.Bash(context.Background(), "work", agent.BashOptions{Timeout: 3 * time.Second, Command: "echo $$ > /tmp/lbx-pipe; sleep 1000"})
	took := time.Since(t0)
	t.Logf("the call took %v", took.Round(time.Millisecond))
	if err != nil || !res.TimedOut {
		t.Fatalf("the call: %+v, %v; want timed out", res, err)
	}
	if took > 8*time.Second {
		t.Errorf("the call took %v with its output held elsewhere, want under 8 s", took)
	}
	select {
	case err := <-human:
		t.Fatalf("the other exec ended with the call: %v", err)
	default:
	}
	if n := loopers(t, &attackEnv{m: m}, "hum"); n != 1 {
		t.Errorf("the other exec's process: %d running, want 1", n)
	}
}
