// Package basetree keeps the trees that sandboxes' /src are made over: the
// files of a base commit, written once per repository, commit and owner
// into a volume that no sandbox mounts, and shared copy on write by every
// sandbox of that base (box.Overlayer), whose own writes go to volumes of
// its own. A second sandbox of a commit so costs the same whatever the
// repository's size.
package basetree

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
)

// Role is the dev.litterbox.managed label of a base tree's volume.
const Role = "base"

// KeepUnused is how many trees no sandbox uses are kept, the newest used
// first, for the next sandboxes of those commits.
const KeepUnused = 2

// LabelFill labels a tree's volume with a token of its making, which the
// tree's directory marks whole once the volume is filled (Use).
const LabelFill = "dev.litterbox.base-fill"

// LabelTree labels a volume made over a tree (a sandbox's /src, a warm
// pool entry's) with the tree's volume: while one exists, prune keeps the
// tree, whatever the records say (a pool entry has none). A pool entry's
// box carries it too, so its digest holds the tree.
const LabelTree = "dev.litterbox.base-tree"

// version changes when what a tree holds for the same inputs does.
const version = "1"

// Trees are a repository's base trees.
type Trees struct{ Repo *hostrepo.Repo }

// Tree is one base tree: its key, its volume, and the directory on the
// host holding its .gitignore and .gitattributes files as the copy found
// them (the sandbox's rules mirror starts as a copy of it).
type Tree struct {
	Key, Volume, Rules string
}

// Key names the tree a copy of commit writes for uid:gid, given the git
// settings that change what the copy writes (filters, line endings, LFS).
func Key(commit string, uid, gid int, settings string) string {
	h := sha256.New()
	for _, s := range []string{version, commit, strconv.Itoa(uid), strconv.Itoa(gid), settings} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Fill writes a tree into /src of box b, a box that is made but never
// started, and its rule files under rules on the host.
type Fill func(ctx context.Context, b box.Box, rules string) error

// Source is what a tree is made of: its key, the commit, and the image
// and user of the box its files are copied through (Podman's copy gives
// the files to the box's user).
type Source struct {
	Key, Commit, Image, User string
	Fill                     Fill
}

func (t Trees) volume(key string) string { return t.Repo.Prefix() + ".base-" + key[:16] }

// VolumeOf is the volume of the tree of key, made or not.
func (t Trees) VolumeOf(key string) string { return t.volume(key) }

// KeyOf is the key of the tree whose volume is volume, as this
// repository's trees directory names it; false when none does.
func (t Trees) KeyOf(volume string) (string, bool) {
	entries, _ := os.ReadDir(t.Repo.Layout().Bases())
	for _, e := range entries {
		if k := e.Name(); e.IsDir() && len(k) == 64 && t.volume(k) == volume {
			return k, true
		}
	}
	return "", false
}

func (t Trees) dir(key string) string { return filepath.Join(t.Repo.Layout().Bases(), key) }

func (t Trees) lock() (func(), error) { return layout.LockFile(t.Repo.Layout().Lock("bases")) }

// Use gives the tree of key, made with fill from image when this engine
// has none, and runs hold with it before any prune may look: hold saves
// the record that names the tree, which keeps it. made says whether this
// call made it.
//
// A tree's volume carries a token of its making (LabelFill), and the
// tree is whole on an engine when the directory of its key holds a
// whole-TOKEN file for that token, written after the volume was filled:
// a copy killed half way, a volume of another engine's making or one of
// the same name from elsewhere never has one, and is made again.
func (t Trees) Use(ctx context.Context, src Source, hold func(Tree) error) (tr Tree, made bool, err error) {
	unlock, err := t.lock()
	if err != nil {
		return Tree{}, false, err
	}
	defer unlock()
	tr = Tree{Key: src.Key, Volume: t.volume(src.Key), Rules: filepath.Join(t.dir(src.Key), "rules")}
	labels, err := t.Repo.Provider.VolumeLabels(ctx, tr.Volume)
	if err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
		return Tree{}, false, err
	}
	exists := err == nil
	if t.whole(src.Key, labels[LabelFill]) {
		now := time.Now()
		_ = os.Chtimes(t.dir(src.Key), now, now)
		return tr, false, hold(tr)
	}
	if err := t.make(ctx, tr, src, exists); err != nil {
		return Tree{}, false, err
	}
	return tr, true, hold(tr)
}

// whole reports whether the tree of key was filled whole as the volume
// whose making token is token.
func (t Trees) whole(key, token string) bool {
	if token == "" || strings.ContainsAny(token, "/.") {
		return false
	}
	_, err := os.Stat(filepath.Join(t.dir(key), "whole-"+token))
	return err == nil
}

// make fills tr's volume through a box that mounts it at /src and is
// never started, so nothing runs beside the files; a volume of the name
// from before (exists: half made, or another's) goes first. On failure
// the volume and the box go again.
func (t Trees) make(ctx context.Context, tr Tree, src Source, exists bool) (err error) {
	p := t.Repo.Provider
	// Named by the tree, which the lock held keeps to one make at a time:
	// a box of that name is a killed make's, and holds the volume.
	name := t.Repo.Prefix() + ".fill-" + tr.Key[:16]
	if exists {
		if err := box.Of(p, name).Remove(ctx); err != nil && !errors.Is(err, box.ErrNotFound) {
			return fmt.Errorf("removing the unfinished base tree's box %s: %w", name, err)
		}
		if err := p.RemoveVolume(ctx, tr.Volume); err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
			return fmt.Errorf("removing the unfinished base tree %s: %w", tr.Volume, err)
		}
	}
	// Unique to this making: the lock keeps makes of one key apart in
	// time (and a test's fixed clock keeps its argv the same).
	sum := sha256.Sum256(fmt.Appendf(nil, "%s %d", tr.Key, t.Repo.Now().UnixNano()))
	token := hex.EncodeToString(sum[:8])
	tmp := t.dir(tr.Key) + ".new"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(tmp, "rules"), 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.WriteFile(filepath.Join(tmp, "commit"), []byte(src.Commit+"\n"), 0o644); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			_ = box.Of(p, name).Remove(ctx)
			_ = p.RemoveVolume(ctx, tr.Volume)
		}
	}()
	labels := t.Repo.Labels("", Role)
	labels[LabelFill] = token
	if err := p.CreateVolume(ctx, tr.Volume, labels); err != nil {
		return err
	}
	spec := box.Spec{
		Name: name, Image: src.Image, User: src.User, Labels: t.Repo.Labels("", hostrepo.RoleCopy),
		ReadOnly: true, Network: "none", CapDrop: []string{"ALL"}, Entrypoint: "/litterbox-never-runs",
		Shared: []box.Mount{{Volume: tr.Volume, Target: hostrepo.Workdir}},
	}
	_, err = p.Create(ctx, spec)
	if errors.Is(err, box.ErrNameInUse) {
		if err = box.Of(p, name).Remove(ctx); err == nil {
			_, err = p.Create(ctx, spec)
		}
	}
	if err != nil {
		return err
	}
	if err := src.Fill(ctx, box.Of(p, name), filepath.Join(tmp, "rules")); err != nil {
		return err
	}
	if err := box.Of(p, name).Remove(ctx); err != nil {
		return err
	}
	// The rules of a tree of the same key another engine made are these.
	if _, err := os.Stat(t.dir(tr.Key)); errors.Is(err, fs.ErrNotExist) {
		if err := os.Rename(tmp, t.dir(tr.Key)); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(t.dir(tr.Key), "whole-"+token), nil, 0o644)
}

// Prune removes the trees no sandbox's record names, but for the keep
// used last. It removes nothing while any record cannot be read: that one
// may name a tree. It returns the volumes it removed and what it could
// not remove.
func (t Trees) Prune(ctx context.Context, keep int) (removed, left []string) {
	unlock, err := t.lock()
	if err != nil {
		return nil, []string{"base trees: " + err.Error()}
	}
	defer unlock()
	used, err := t.usedBy()
	if err != nil {
		return nil, []string{"base trees: " + err.Error()}
	}
	here, err := t.here(ctx)
	if err != nil {
		return nil, []string{"base trees: " + err.Error()}
	}
	entries, err := os.ReadDir(t.Repo.Layout().Bases())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, []string{"base trees: " + err.Error()}
	}
	type tree struct {
		key  string
		used time.Time
	}
	var unused []tree
	for _, e := range entries {
		info, err := e.Info()
		v := t.volume(e.Name())
		if err != nil || !e.IsDir() || strings.Contains(e.Name(), ".") || len(used[v]) > 0 || !here[v] {
			continue
		}
		unused = append(unused, tree{e.Name(), info.ModTime()})
	}
	slices.SortFunc(unused, func(a, b tree) int { return b.used.Compare(a.used) })
	for _, u := range unused[min(keep, len(unused)):] {
		v := t.volume(u.key)
		over, err := t.Repo.Provider.Volumes(ctx, map[string]string{LabelTree: v})
		if err != nil {
			left = append(left, "volume "+v+": "+err.Error())
			continue
		}
		if len(over) > 0 {
			continue // a pool entry's /src, or a sandbox's whose record is gone
		}
		labels, _ := t.Repo.Provider.VolumeLabels(ctx, v)
		if err := t.Repo.Provider.RemoveVolume(ctx, v); err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
			left = append(left, "volume "+v)
			continue
		}
		removed = append(removed, "volume "+v)
		if err := t.forget(u.key, labels[LabelFill]); err != nil {
			left = append(left, t.dir(u.key))
		}
	}
	return removed, left
}

// forget drops the mark of this engine's tree of key, made as token, and
// the tree's directory once no engine's mark is left in it.
func (t Trees) forget(key, token string) error {
	if token != "" && !strings.ContainsAny(token, "/.") {
		if err := os.Remove(filepath.Join(t.dir(key), "whole-"+token)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	marks, err := filepath.Glob(filepath.Join(t.dir(key), "whole-*"))
	if err != nil || len(marks) > 0 {
		return err
	}
	return os.RemoveAll(t.dir(key))
}

// here are the repository's tree volumes on this engine.
func (t Trees) here(ctx context.Context) (map[string]bool, error) {
	vols, err := t.Repo.Provider.Volumes(ctx, map[string]string{hostrepo.LabelManaged: Role, hostrepo.LabelRepoID: t.Repo.RepoID})
	if err != nil {
		return nil, err
	}
	here := map[string]bool{}
	for _, v := range vols {
		here[v] = true
	}
	return here, nil
}

// Info is a tree as `litterbox cache ls` shows it.
type Info struct {
	Key    string    `json:"key"`
	Volume string    `json:"volume"`
	Commit string    `json:"commit"`
	UsedBy []string  `json:"used_by"`
	Used   time.Time `json:"used"`
}

// List gives the trees on this engine, used last first, with the
// sandboxes made over each.
func (t Trees) List(ctx context.Context) ([]Info, error) {
	by, err := t.usedBy()
	if err != nil {
		return nil, err
	}
	here, err := t.here(ctx)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(t.Repo.Layout().Bases())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out := []Info{}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !e.IsDir() || strings.Contains(e.Name(), ".") {
			continue
		}
		v := t.volume(e.Name())
		if !here[v] {
			continue
		}
		commit, _ := os.ReadFile(filepath.Join(t.dir(e.Name()), "commit"))
		out = append(out, Info{Key: e.Name(), Volume: v, Commit: strings.TrimSpace(string(commit)), UsedBy: orEmpty(by[v]), Used: info.ModTime()})
	}
	slices.SortFunc(out, func(a, b Info) int { return b.Used.Compare(a.Used) })
	return out, nil
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// usedBy gives, per tree volume, the sandboxes whose records name it.
func (t Trees) usedBy() (map[string][]string, error) {
	l := t.Repo.Layout()
	entries, err := os.ReadDir(filepath.Dir(l.Record("x")))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	by := map[string][]string{}
	for _, e := range entries {
		slug, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		rec, err := t.Repo.Store().Load(slug)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", e.Name(), err)
		}
		if rec != nil && rec.Layer != nil {
			by[rec.Layer.Base] = append(by[rec.Layer.Base], slug)
		}
	}
	return by, nil
}

// PruneGone removes the trees, on the engine of p, of repositories that
// are gone (no directory is left where their label says), which nothing
// can use again, but for those a volume still lies over (a gone
// repository's sandbox, still running). It returns the volumes removed.
func PruneGone(ctx context.Context, p box.Provider) (removed, left []string, err error) {
	vols, err := p.Volumes(ctx, map[string]string{hostrepo.LabelManaged: Role})
	if err != nil {
		return nil, nil, err
	}
	for _, v := range vols {
		labels, err := p.VolumeLabels(ctx, v)
		if errors.Is(err, box.ErrNoSuchVolume) {
			continue
		}
		if err != nil {
			return removed, left, err
		}
		// Gone only when nothing is there: a repository this user cannot
		// reach now (another's home, an unmounted disk) may still be.
		repo := labels[hostrepo.LabelRepo]
		if _, err := os.Stat(repo); repo == "" || !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		over, err := p.Volumes(ctx, map[string]string{LabelTree: v})
		if err != nil {
			return removed, left, err
		}
		if len(over) > 0 {
			continue
		}
		if err := p.RemoveVolume(ctx, v); err != nil && !errors.Is(err, box.ErrNoSuchVolume) {
			left = append(left, "volume "+v)
			continue
		}
		removed = append(removed, v)
	}
	return removed, left, nil
}
