package reviewstate

import (
	"path/filepath"
	"testing"
	"time"
)

// Where the work stands follows the branch: a mark holds while the tip it
// was made at does, and a rejection until the agent is told.
func TestNow(t *testing.T) {
	cases := []struct {
		mark      Mark
		tip, want string
	}{
		{Mark{}, "t1", Working},
		{Mark{State: Ready, Tip: "t1"}, "t1", Ready},
		{Mark{State: Ready, Tip: "t1"}, "t2", Working},
		{Mark{State: Taken, Tip: "t1"}, "t1", Taken},
		{Mark{State: Taken, Tip: "t1"}, "t2", Working},
		{Mark{State: Rejected, Tip: "t1"}, "t2", Rejected},
		{Mark{State: Rejected, Tip: "t1", Told: true}, "t1", Working},
	}
	for _, c := range cases {
		if got := c.mark.Now(c.tip); got != c.want {
			t.Errorf("%+v at %s: %s, want %s", c.mark, c.tip, got, c.want)
		}
	}
}

// A sandbox with no mark is working; a saved mark reads back whole.
func TestSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "review", "w.json")
	if m, err := Load(path); err != nil || m.Now("x") != Working {
		t.Fatalf("no mark: %+v %v", m, err)
	}
	want := Mark{State: Rejected, Message: "why\nmore", By: ByPerson, Tip: "abc", At: time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)}
	if err := Save(path, want); err != nil {
		t.Fatal(err)
	}
	if got, err := Load(path); err != nil || got != want {
		t.Errorf("read back %+v %v, want %+v", got, err, want)
	}
}
