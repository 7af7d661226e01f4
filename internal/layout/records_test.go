package layout

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// A record saved is loaded back; a damaged one is skipped by All but
// reported by Load; a missing one is nil, and removing it twice is fine.
func TestStore(t *testing.T) {
	s := New(t.TempDir()).Store()
	if r, err := s.Load("x"); r != nil || err != nil {
		t.Fatalf("missing record: %v, %v", r, err)
	}
	if err := s.Save(&Record{Name: "x", Status: Ready}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.path("bad"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("bad"); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("damaged record: %v", err)
	}
	if all := s.All(); len(all) != 1 || all["x"].Status != Ready {
		t.Errorf("All = %v", all)
	}
	for range 2 {
		if err := s.Remove("x"); err != nil {
			t.Fatal(err)
		}
	}
}

// A held sandbox lock makes a second taker wait until its context ends,
// and says for which sandbox.
func TestLockSandboxWaits(t *testing.T) {
	p := New(t.TempDir()).Lock("x")
	unlock, err := LockSandbox(context.Background(), p, "x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := LockSandbox(ctx, p, "x"); err == nil || !strings.Contains(err.Error(), "waiting for another call on sandbox 'x'") {
		t.Errorf("second taker: %v", err)
	}
	unlock()
	again, err := LockSandbox(context.Background(), p, "x")
	if err != nil {
		t.Fatal(err)
	}
	again()
}

// A taker that waits past WaitNotice is told, once, what holds the lock
// and since when; a short wait says nothing.
func TestLockSandboxSaysWhatHoldsIt(t *testing.T) {
	p := New(t.TempDir()).Lock("x")
	unlock, err := LockSandbox(WithCall(context.Background(), "bash: make test"), p, "x")
	if err != nil {
		t.Fatal(err)
	}
	var told []Holder
	var mu sync.Mutex
	ctx := OnWait(context.Background(), func(h Holder) { mu.Lock(); told = append(told, h); mu.Unlock() })
	time.AfterFunc(WaitNotice+200*time.Millisecond, unlock)
	second, err := LockSandbox(ctx, p, "x")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(told) != 1 || told[0].Call != "bash: make test" || told[0].PID != os.Getpid() || time.Since(told[0].Since) > 5*time.Second {
		t.Errorf("told %+v", told)
	}
	mu.Unlock()
	second()
	told = nil
	third, err := LockSandbox(ctx, p, "x")
	if err != nil || len(told) != 0 {
		t.Errorf("a free lock: told %+v, %v", told, err)
	}
	third()
}

// The lock file keeps its last holder: held while it runs, then with
// the time it ended, for list's owner and idle columns; an MCP server's
// call says so and names its client.
func TestLockSandboxLeavesItsLastHolder(t *testing.T) {
	p := New(t.TempDir()).Lock("x")
	if h, held := Last(p); h != nil || held {
		t.Fatalf("never taken: %+v, held %v", h, held)
	}
	ctx := WithClient(WithCall(context.Background(), "write: a.go"), "claude-code")
	unlock, err := LockSandbox(ctx, p, "x")
	if err != nil {
		t.Fatal(err)
	}
	h, held := Last(p)
	if !held || h == nil || h.Call != "write: a.go" || !h.MCP || h.Client != "claude-code" || h.PID != os.Getpid() || !h.Ended.IsZero() {
		t.Errorf("while held: %+v, held %v", h, held)
	}
	if s := Session(p); s == nil || s.Call != "write: a.go" {
		t.Errorf("Session while held: %+v", s)
	}
	before := time.Now()
	unlock()
	// The call's text is not kept: a secret's value may be in it.
	h, held = Last(p)
	if held || h == nil || h.Call != "" || !h.MCP || h.Client != "claude-code" || h.Ended.Before(before) || h.Ended.Before(h.Since) {
		t.Errorf("after: %+v, held %v", h, held)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the lock file's mode: %v, %v", fi.Mode(), err)
	}
	if s := Session(p); s != nil {
		t.Errorf("Session after: %+v", s)
	}
	unlock, err = LockSandbox(WithCall(context.Background(), "exec: true"), p, "x")
	if err != nil {
		t.Fatal(err)
	}
	unlock()
	if h, _ := Last(p); h == nil || h.MCP || h.Client != "" || h.Call != "" || h.PID != os.Getpid() {
		t.Errorf("a command's call: %+v", h)
	}
}
