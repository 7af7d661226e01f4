package layout

import (
	"context"
	"os"
	"strings"
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
