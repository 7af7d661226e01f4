package dockercli

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

// dirsRunner answers volume inspect with a directory per volume, and
// records every command.
type dirsRunner struct {
	mu    sync.Mutex
	lines []string
}

func (r *dirsRunner) Run(_ context.Context, c runner.Cmd) (runner.Result, error) {
	a := c.Argv()
	r.mu.Lock()
	r.lines = append(r.lines, strings.Join(a, " "))
	r.mu.Unlock()
	if len(a) > 2 && a[1] == "volume" && a[2] == "inspect" {
		var out strings.Builder
		for _, v := range a[5:] {
			out.WriteString("/v/" + v + "/_data\n")
		}
		return runner.Result{Stdout: []byte(out.String())}, nil
	}
	return runner.Result{}, nil
}

// A directory of a third volume lies between the lower and the writes:
// overlayfs reads lowerdir top first.
func TestOverlayVolumeBetween(t *testing.T) {
	r := &dirsRunner{}
	err := New("docker", r).OverlayVolume(context.Background(), box.Overlay{
		Name: "src", Lower: box.VolumeDir{Volume: "tree"}, Upper: "src-upper", Work: "src-work", Between: &box.VolumeDir{Volume: "cache", Sub: "src"},
	})
	if err != nil {
		t.Fatal(err)
	}
	last := r.lines[len(r.lines)-1]
	if want := "o=lowerdir=/v/cache/_data/src:/v/tree/_data,upperdir=/v/src-upper/_data,workdir=/v/src-work/_data"; !strings.Contains(last, want) {
		t.Errorf("overlay made with %q, want %q", last, want)
	}
	// A directory of a volume alone (a home over a cache entry's home/).
	r = &dirsRunner{}
	err = New("docker", r).OverlayVolume(context.Background(), box.Overlay{
		Name: "home", Lower: box.VolumeDir{Volume: "cache", Sub: "home"}, Upper: "home-upper", Work: "home-work",
	})
	if err != nil {
		t.Fatal(err)
	}
	last = r.lines[len(r.lines)-1]
	if want := "o=lowerdir=/v/cache/_data/home,upperdir=/v/home-upper/_data,workdir=/v/home-work/_data"; !strings.Contains(last, want) {
		t.Errorf("overlay made with %q, want %q", last, want)
	}
}

// A directory whose name would break the mount's options, or climb out
// of its volume, is refused before any volume is made over it.
func TestOverlaySubRefusesWhatBreaksTheOptions(t *testing.T) {
	for _, sub := range []string{"/src", "../x", "..", "a/../b", "a,upperdir=/", "a:b", `a\b`, "a/"} {
		if _, err := overlaySub(sub); err == nil {
			t.Errorf("%q taken", sub)
		}
	}
	for sub, want := range map[string]string{"": "", "src": "/src", "keep/abc": "/keep/abc"} {
		if got, err := overlaySub(sub); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", sub, got, err, want)
		}
	}
}
