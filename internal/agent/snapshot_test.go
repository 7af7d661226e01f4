package agent

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helperbin"
	"github.com/litterbox-dev/litterbox/internal/secrets"
)

// A limit under a millisecond still limits: the helper reads 0 as none.
func TestTimeoutMS(t *testing.T) {
	for d, want := range map[time.Duration]uint64{0: 0, -time.Second: 0, time.Nanosecond: 1, 999 * time.Microsecond: 1, time.Millisecond: 1, 1500 * time.Microsecond: 2, 2 * time.Second: 2000} {
		if got := timeoutMS(d); got != want {
			t.Errorf("timeoutMS(%v) = %d, want %d", d, got, want)
		}
	}
}

// What the log shows for an agent call: the command run with sh -c (a
// secret in it masked), a text write as content piped to the helper's put,
// and nothing else for content that is binary, too big or holds a secret.
func TestShownAct(t *testing.T) {
	r := &secrets.Resolver{LookupEnv: func(string) (string, bool) { return "hunter2-long-value", true }}
	sec, err := r.Resolve(context.Background(), map[string]config.SecretSpec{"TOKEN": {Env: "TOKEN"}})
	if err != nil {
		t.Fatal(err)
	}
	h := helperbin.Pinned("/nonexistent", "abc")
	run := shownAct(h, Action{Op: protocol.OpRun, Arg: "/src/sub", Cmd: "curl -H 'x: hunter2-long-value' x"}, box.ExecSpec{Env: map[string]string{"A": "1"}, Secrets: sec.Env()}, sec)
	if got := strings.Join(dockercli.ExecArgs("c", run.Spec), " "); got != "exec --workdir /src/sub --env A=1 --env TOKEN c /bin/sh -c curl -H 'x: ***' x" {
		t.Errorf("run shown as %q", got)
	}
	write := func(content string) *box.Shown {
		return shownAct(h, Action{Op: protocol.OpWrite, Arg: "/src/a.txt", Content: bytes.NewReader([]byte(content)), Size: int64(len(content))}, box.ExecSpec{}, sec)
	}
	if w := write("hello\n"); w == nil || string(w.Input) != "hello\n" || strings.Join(w.Spec.Cmd, " ") != "/.litterbox/abc/litterbox-helper put /src/a.txt" {
		t.Errorf("write shown as %+v", w)
	}
	for name, content := range map[string]string{"binary": "a\x00b", "not UTF-8": "\xff\xfe", "secret": "token=hunter2-long-value", "big": strings.Repeat("x", maxShownInput+1)} {
		if w := write(content); w != nil {
			t.Errorf("%s content shown: %+v", name, w)
		}
	}
	if shownAct(h, Action{Op: protocol.OpScan}, box.ExecSpec{}, sec) != nil {
		t.Error("a scan has no equivalent to show")
	}
}
