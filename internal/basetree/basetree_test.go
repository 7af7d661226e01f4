//go:build linux

package basetree_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/basetree"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/box/membox"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/sandbox/sandboxtest"
)

func TestKeyChangesWithEachInput(t *testing.T) {
	base := basetree.Key("c1", 1000, 1000, "core.eol lf\n")
	for name, k := range map[string]string{
		"commit":   basetree.Key("c2", 1000, 1000, "core.eol lf\n"),
		"uid":      basetree.Key("c1", 1001, 1000, "core.eol lf\n"),
		"gid":      basetree.Key("c1", 1000, 1001, "core.eol lf\n"),
		"settings": basetree.Key("c1", 1000, 1000, "core.eol crlf\n"),
		// The fields are kept apart: no input runs into the next.
		"boundary": basetree.Key("c11", 1000, 1000, "core.eol lf\n"[1:]),
	} {
		if k == base {
			t.Errorf("a change of %s keeps the key", name)
		}
	}
	if basetree.Key("c1", 1000, 1000, "core.eol lf\n") != base {
		t.Error("the same inputs give another key")
	}
}

// trees are the base trees of a repository over the in-memory provider.
func trees(t *testing.T) (basetree.Trees, *membox.Provider) {
	t.Helper()
	m, p := sandboxtest.Mem(t, nil)
	return basetree.Trees{Repo: m.Repo}, p
}

// source fills a tree with one file and counts its fills; fail, when
// set, fails the fill after the file is written.
func source(key string, fills *int, fail error) basetree.Source {
	return basetree.Source{Key: key, Commit: "commit-" + key[:4], Image: "busybox", User: "1000:1000", Fill: func(ctx context.Context, b box.Box, rules string) error {
		*fills++
		if err := os.WriteFile(filepath.Join(rules, ".gitignore"), []byte("*.o\n"), 0o644); err != nil {
			return err
		}
		return fail
	}}
}

func key(s string) string { return basetree.Key(s, 1000, 1000, "") }

func TestUseMakesATreeOnceAndHoldsIt(t *testing.T) {
	ctx := context.Background()
	tr, p := trees(t)
	fills, holds := 0, 0
	hold := func(basetree.Tree) error { holds++; return nil }
	first, made, err := tr.Use(ctx, source(key("a"), &fills, nil), hold)
	if err != nil || !made {
		t.Fatalf("first use: made %v, %v", made, err)
	}
	second, made, err := tr.Use(ctx, source(key("a"), &fills, nil), hold)
	if err != nil || made || second != first {
		t.Fatalf("second use: %+v made %v, %v; want %+v", second, made, err, first)
	}
	if fills != 1 || holds != 2 {
		t.Errorf("%d fills and %d holds, want 1 and 2", fills, holds)
	}
	if data, err := os.ReadFile(filepath.Join(first.Rules, ".gitignore")); string(data) != "*.o\n" {
		t.Errorf("the tree's rules: %q %v", data, err)
	}
	if vols, _ := p.Volumes(ctx, map[string]string{"dev.litterbox.managed": basetree.Role}); !slices.Equal(vols, []string{first.Volume}) {
		t.Errorf("volumes %v, want the tree's %s", vols, first.Volume)
	}
	if boxes, _ := p.List(ctx, nil, nil); len(boxes) != 0 {
		t.Errorf("the fill's box is left: %+v", boxes)
	}
}

func TestAFailedFillLeavesNoTree(t *testing.T) {
	ctx := context.Background()
	tr, p := trees(t)
	fills := 0
	hold := func(basetree.Tree) error { t.Error("a failed make was held"); return nil }
	boom := errors.New("copy failed")
	if _, _, err := tr.Use(ctx, source(key("a"), &fills, boom), hold); !errors.Is(err, boom) {
		t.Fatalf("use: %v, want the fill's error", err)
	}
	if vols, _ := p.Volumes(ctx, nil); len(vols) != 0 {
		t.Errorf("volumes left: %v", vols)
	}
	if list, _ := tr.List(ctx); len(list) != 0 {
		t.Errorf("a half-made tree is listed: %+v", list)
	}
	if _, made, err := tr.Use(ctx, source(key("a"), &fills, nil), func(basetree.Tree) error { return nil }); err != nil || !made || fills != 2 {
		t.Errorf("the next use: made %v, %d fills, %v; want it made again", made, fills, err)
	}
}

func TestPruneKeepsTheUsedAndTheNewest(t *testing.T) {
	ctx := context.Background()
	tr, p := trees(t)
	l := tr.Repo.Layout()
	fills := 0
	var made []basetree.Tree
	for i, s := range []string{"a", "b", "c", "d"} {
		tree, _, err := tr.Use(ctx, source(key(s), &fills, nil), func(basetree.Tree) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		// Used in order: a first, d last.
		when := time.Now().Add(time.Duration(i-10) * time.Minute)
		if err := os.Chtimes(filepath.Join(l.Bases(), tree.Key), when, when); err != nil {
			t.Fatal(err)
		}
		made = append(made, tree)
	}
	// a, the oldest, is a sandbox's.
	if err := tr.Repo.Store().Save(&layout.Record{Name: "s", Layer: &layout.Layer{Base: made[0].Volume}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Record("broken"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if removed, left := tr.Prune(ctx, 1); len(removed) != 0 || len(left) != 1 || !strings.Contains(left[0], "broken") {
		t.Errorf("with a record unread: removed %v, left %v; want nothing removed and the record named", removed, left)
	}
	os.Remove(l.Record("broken"))
	// b is a pool entry's, which has no record: its /src names it.
	if err := p.CreateVolume(ctx, "entry-src", map[string]string{basetree.LabelTree: made[1].Volume}); err != nil {
		t.Fatal(err)
	}
	removed, left := tr.Prune(ctx, 1)
	if want := []string{"volume " + made[2].Volume}; !slices.Equal(removed, want) || len(left) != 0 {
		t.Errorf("removed %v (left %v), want %v: the record's, the entry's and the newest unused kept", removed, left, want)
	}
	list, _ := tr.List(ctx)
	var got []string
	for _, i := range list {
		got = append(got, i.Volume+" "+strings.Join(i.UsedBy, ","))
	}
	if want := []string{made[3].Volume + " ", made[1].Volume + " ", made[0].Volume + " s"}; !slices.Equal(got, want) {
		t.Errorf("listed %v, want %v", got, want)
	}
}

func TestATreeIsWholeOnlyOnTheEngineThatFilledIt(t *testing.T) {
	ctx := context.Background()
	tr, first := trees(t)
	fills := 0
	use := func() bool {
		t.Helper()
		_, made, err := tr.Use(ctx, source(key("a"), &fills, nil), func(basetree.Tree) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		return made
	}
	if !use() {
		t.Fatal("the first use made nothing")
	}
	// Another engine (Podman beside Docker) has no such volume; then one
	// whose volume of that name was never marked whole (a fill killed
	// half way, or made by someone else).
	second := membox.New(t.TempDir())
	tr.Repo.Provider = second
	if !use() || use() {
		t.Error("a second engine did not make its own tree once")
	}
	third := membox.New(t.TempDir())
	if err := third.CreateVolume(ctx, tr.VolumeOf(key("a")), map[string]string{basetree.LabelFill: "0123456789abcdef"}); err != nil {
		t.Fatal(err)
	}
	tr.Repo.Provider = third
	if !use() {
		t.Error("a volume never marked whole was taken as the tree")
	}
	tr.Repo.Provider = first
	if use() || fills != 3 {
		t.Errorf("back on the first engine: %d fills, want 3 and its tree kept", fills)
	}
}
