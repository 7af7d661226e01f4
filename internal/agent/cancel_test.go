package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
)

// A helper that never answers: past the command's timeout the host sends
// the cancel itself, and cancelGrace later it gives up the conversation;
// a caller's cancel does the same at once.
func TestWatchCancelBounds(t *testing.T) {
	oldSlack, oldGrace := resultSlack, cancelGrace
	resultSlack, cancelGrace = 100*time.Millisecond, 200*time.Millisecond
	t.Cleanup(func() { resultSlack, cancelGrace = oldSlack, oldGrace })

	run := func(ctx context.Context, timeout time.Duration) (time.Duration, []byte) {
		var sent bytes.Buffer
		aborted := make(chan time.Time, 1)
		stop := make(chan struct{})
		t0 := time.Now()
		go watchCancel(ctx, protocol.NewWriter(&sent), answerBound{timeout: timeout, abort: func(error) { aborted <- time.Now() }}, stop)
		select {
		case at := <-aborted:
			close(stop)
			return at.Sub(t0), sent.Bytes()
		case <-time.After(5 * time.Second):
			t.Fatal("never aborted")
			return 0, nil
		}
	}
	took, sent := run(context.Background(), 300*time.Millisecond)
	if took < 600*time.Millisecond || took > 2*time.Second {
		t.Errorf("after a timeout of 300 ms: aborted at %v, want about 600 ms", took)
	}
	if typ, _, err := protocol.NewReader(bytes.NewReader(sent)).Next(); err != nil || typ != protocol.TCancel {
		t.Errorf("sent %q (%v), want a cancel frame", sent, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if took, _ := run(ctx, 0); took < 200*time.Millisecond || took > time.Second {
		t.Errorf("after the caller's cancel: aborted at %v, want about 200 ms", took)
	}

	// A result in time: no abort.
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		watchCancel(context.Background(), protocol.NewWriter(&bytes.Buffer{}), answerBound{timeout: time.Second, abort: func(error) { t.Error("aborted") }}, stop)
		close(done)
	}()
	close(stop)
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("watchCancel did not return when the result came")
	}
}

// A conversation abort cut fails with abort's cause, the first one, not
// with the closed pipe its reads and writes then meet.
func TestAbortCauseIsReported(t *testing.T) {
	late := errors.New("the sandbox did not end the command within 10s of the cancel")
	ended := &EndedError{Slug: "work", Container: "c", ExitCode: 137}
	for _, causes := range [][]error{{ended, late}, {late, ended}} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		v := &actExec{inW: inW, outR: outR, done: make(chan error, 1), cancelExec: func() {}}
		for _, c := range causes {
			v.abort(c)
		}
		_, _, rerr := protocol.NewReader(outR).Next()
		if _, werr := outW.Write([]byte("x")); !errors.Is(werr, causes[0]) || rerr == nil {
			t.Fatalf("after abort: read %v, write %v", rerr, werr)
		}
		inR.Close()
		v.done <- context.Canceled
		if err := v.stop(context.Background(), fmt.Errorf("reading the sandbox's answer: %w", rerr)); err != causes[0] {
			t.Errorf("stop = %v, want %v", err, causes[0])
		}
	}
}

// The bound on the helper's Begin ends with the Begin: the scan of what
// changed between calls that follows may take longer than the command's
// own timeout (100k directories under load) and is bounded as the call's
// own scan is. A Begin that does not come in time cuts the conversation.
func TestBeginBoundEndsWithTheBegin(t *testing.T) {
	oldSlack := resultSlack
	resultSlack = 50 * time.Millisecond
	t.Cleanup(func() { resultSlack = oldSlack })
	begin := func(answer bool) (cut error) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		defer inR.Close()
		v := &actExec{inW: inW, outR: outR, done: make(chan error, 1), cancelExec: func() {}}
		c := &call{a: Action{Timeout: 50 * time.Millisecond}}
		if answer {
			go func() { _ = protocol.NewWriter(outW).Frame(protocol.TBegin, nil) }()
		}
		_, err := awaitBegin(c, v, snapshot.Conversation{R: protocol.NewReader(outR), W: protocol.NewWriter(inW)})
		if answer && err != nil {
			t.Fatalf("awaitBegin: %v", err)
		}
		time.Sleep(300 * time.Millisecond) // the scan between calls
		v.mu.Lock()
		defer v.mu.Unlock()
		return v.cut
	}
	if cut := begin(true); cut != nil {
		t.Errorf("a Begin in time, then a long scan: the conversation was cut: %v", cut)
	}
	if cut := begin(false); cut == nil || !strings.Contains(cut.Error(), "did not answer within 100ms") {
		t.Errorf("no Begin: cut %v, want the bound named", cut)
	}
}
