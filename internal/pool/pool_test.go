package pool

import (
	"reflect"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
)

func TestNamesAreEntriesAndNeverASandbox(t *testing.T) {
	a, b := NewName("litterbox-app-1a2b3c4d"), NewName("litterbox-app-1a2b3c4d")
	if a == b {
		t.Fatalf("two new entries share the name %s", a)
	}
	if !strings.HasPrefix(a, "litterbox-app-1a2b3c4d.pool-") || !IsEntry(a) {
		t.Fatalf("entry name %q", a)
	}
	if IsEntry("litterbox-app-1a2b3c4d-pool-x") {
		t.Fatal("a sandbox called pool-x is no entry")
	}
}

// The digest changes with anything of the box, and with the image the
// tag names, but not with the map order of its labels.
func TestDigestFollowsTheBox(t *testing.T) {
	spec := box.Spec{Image: "busybox:latest", Env: map[string]string{"A": "1", "B": "2"}, Memory: "2g"}
	d := Digest(spec, "sha256:1")
	if len(d) != 16 || d != Digest(spec, "sha256:1") {
		t.Fatalf("digest %q is not stable", d)
	}
	other := spec
	other.Memory = "1g"
	for name, got := range map[string]string{"image id": Digest(spec, "sha256:2"), "memory": Digest(other, "sha256:1")} {
		if got == d {
			t.Errorf("another %s gave the same digest", name)
		}
	}
}

func TestSplitKeepsOnlyRunningEntriesOfTheDigest(t *testing.T) {
	entries := []Entry{{Name: "a", Digest: "d1", Running: true}, {Name: "b", Digest: "d2", Running: true}, {Name: "c", Digest: "d1"}}
	ready, stale := Split(entries, "d1")
	if !reflect.DeepEqual(ready, entries[:1]) || !reflect.DeepEqual(stale, entries[1:]) {
		t.Fatalf("ready %v, stale %v", ready, stale)
	}
	if _, stale := Split(entries, ""); len(stale) != 3 {
		t.Fatalf("with no digest (a config the pool cannot serve) every entry is stale: %v", stale)
	}
}

// Only an entry's own volumes are read from its label: a container of
// anyone's may list another project's volumes there.
func TestVolumesOfKeepsTheEntrysOwn(t *testing.T) {
	for label, want := range map[string][]string{
		"litterbox-a-1.pool-0f-src,litterbox-a-1.pool-0f-home,litterbox-a-1.pool-0f-keep-opt": {"litterbox-a-1.pool-0f-src", "litterbox-a-1.pool-0f-home", "litterbox-a-1.pool-0f-keep-opt"},
		"litterbox-a-1.pool-0f-src,postgres-data":                                             {"litterbox-a-1.pool-0f-src"},
		"postgres-data-src,postgres-data-home":                                                {},
		"":                                                                                    {},
	} {
		if got := VolumesOf(map[string]string{LabelVolumes: label}); !reflect.DeepEqual(got, want) {
			t.Errorf("VolumesOf(%q) = %q, want %q", label, got, want)
		}
	}
}

func TestEntriesBeingMadeAreNeverClaimed(t *testing.T) {
	name := NewName("litterbox-a-1")
	mk := MakingName(name)
	if !IsEntry(mk) || mk == name || !strings.Contains(mk, ".poolmaking-") {
		t.Fatalf("making name %q of %q", mk, name)
	}
	e := entriesIn([]box.Summary{{Name: mk, State: "running", Labels: map[string]string{LabelDigest: "d"}}})[0]
	if ready, _ := Split([]Entry{e}, "d"); !e.Making || len(ready) != 0 {
		t.Fatalf("an entry being made is ready: %+v", e)
	}
}

func TestVolumesLabel(t *testing.T) {
	got := VolumesLabel([]box.Mount{{Volume: "x.pool-1-src", Target: "/src"}, {Volume: "x.pool-1-home", Target: "/home/litterbox"}})
	if got != "x.pool-1-src,x.pool-1-home" {
		t.Fatalf("label %q", got)
	}
}
