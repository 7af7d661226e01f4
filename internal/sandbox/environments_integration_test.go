//go:build integration

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/internal/setupcache"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// repoManager makes a repository of files (committed) and local, an
// uncommitted .litterbox.local.toml when not empty, and a Manager that
// reads the config files at every create, as the CLI does; everything made
// for it, built images included, is removed when the test ends.
func repoManager(t *testing.T, files testenv.Files, local string) *Manager {
	t.Helper()
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbenv"))
	testenv.NewRepo(t, dir, files)
	if local != "" {
		writeFile(t, filepath.Join(dir, ".litterbox.local.toml"), local)
	}
	m, err := OpenRepo(context.Background(), testenv.Exec(), engine.Docker, hostrepo.Location{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	return m
}

// readFile reads p in sandbox name through the helper: no shell needed.
func readFile(t *testing.T, m *Manager, name, p string) string {
	t.Helper()
	r, err := m.Agent.Read(context.Background(), name, p, 0, 100)
	if err != nil {
		t.Fatalf("read %s in %s: %v", p, name, err)
	}
	return r.Content
}

func assertNothingMade(t *testing.T, m *Manager, slug string) {
	t.Helper()
	if left := leftovers(t, m, slug); len(left) > 0 {
		t.Fatalf("a failed create left %v", left)
	}
}

// A project image: built from the project's Dockerfile FROM each image of
// the matrix (COPY, so the shell-less one builds too), tagged by its
// inputs' digest, not rebuilt while they stay the same, rebuilt when the
// Dockerfile changes.
func TestIntegrationProjectImage(t *testing.T) {
	for _, base := range []string{shellImages[0], shellImages[1], noShellImage} {
		t.Run(imageName(base), func(t *testing.T) {
			ctx := context.Background()
			m := repoManager(t, testenv.Files{
				"README.md":         "hi\n",
				"docker/Dockerfile": "FROM " + base + "\nARG FLAVOUR=plain\nCOPY marker.txt /opt/marker\n",
				"docker/marker.txt": "built\n",
			}, "[docker]\nbuild = \"docker/Dockerfile\"\ncontext = \"docker\"\nargs = { FLAVOUR = \"x\" }\n")
			c, err := m.Create(ctx, create.CreateOptions{Name: "one"})
			if err != nil {
				t.Fatal(err)
			}
			if c.Build == nil || c.Build.Cached || !strings.HasPrefix(c.Image, "litterbox/"+m.Repo.RepoSlug+"-"+m.Repo.RepoID+":") {
				t.Fatalf("first create: image %q build %+v", c.Image, c.Build)
			}
			if got := readFile(t, m, "one", "/opt/marker"); got != "built\n" {
				t.Fatalf("/opt/marker = %q", got)
			}
			c2, err := m.Create(ctx, create.CreateOptions{Name: "two"})
			if err != nil {
				t.Fatal(err)
			}
			if c2.Build == nil || !c2.Build.Cached || c2.Image != c.Image {
				t.Fatalf("unchanged inputs rebuilt: %+v (first %s)", c2.Build, c.Image)
			}
			// Only a commit changes what is built: the work tree's edit is
			// not in the context until it is committed.
			writeFile(t, filepath.Join(m.Repo.Root, "docker/marker.txt"), "changed\n")
			c25, err := m.Create(ctx, create.CreateOptions{Name: "uncommitted"})
			if err != nil {
				t.Fatal(err)
			}
			if !c25.Build.Cached || c25.Image != c.Image || readFile(t, m, "uncommitted", "/opt/marker") != "built\n" {
				t.Fatalf("an uncommitted change reached the build: %+v %s", c25.Build, c25.Image)
			}
			testenv.Git(t, m.Repo.Root, "commit", "-qam", "marker")
			c3, err := m.Create(ctx, create.CreateOptions{Name: "three"})
			if err != nil {
				t.Fatal(err)
			}
			if c3.Build.Cached || c3.Image == c.Image || readFile(t, m, "three", "/opt/marker") != "changed\n" {
				t.Fatalf("a changed context was not rebuilt: %+v %s", c3.Build, c3.Image)
			}
		})
	}
}

// Bad builds make nothing and say why in the error's first line.
func TestIntegrationProjectImageFailures(t *testing.T) {
	ctx := context.Background()
	m := repoManager(t, testenv.Files{
		"README.md":  "hi\n",
		"Dockerfile": "FROM busybox:latest\nRUN echo the-build-broke-here && exit 3\n",
	}, "[docker]\nbuild = \"Dockerfile\"\n")
	_, err := m.Create(ctx, create.CreateOptions{Name: "broken"})
	var be *image.BuildError
	if !errors.As(err, &be) || !strings.Contains(be.Tail, "the-build-broke-here") || !strings.HasPrefix(err.Error(), "building Dockerfile failed") {
		t.Fatalf("failing build: %v", err)
	}
	assertNothingMade(t, m, "broken")

	writeFile(t, filepath.Join(m.Repo.Root, ".litterbox.local.toml"), "[docker]\nbuild = \"nope/Dockerfile\"\n")
	_, err = m.Create(ctx, create.CreateOptions{Name: "missing"})
	if err == nil || !strings.HasPrefix(err.Error(), "[docker] build: no Dockerfile at nope/Dockerfile in commit ") {
		t.Fatalf("missing Dockerfile: %v", err)
	}
	assertNothingMade(t, m, "missing")

	// A committed build runs the repository's Dockerfile with the network:
	// it needs the user's trust like any other loosening.
	if err := os.Remove(filepath.Join(m.Repo.Root, ".litterbox.local.toml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(m.Repo.Root, ".litterbox.toml"), "[docker]\nbuild = \"Dockerfile\"\n")
	testenv.Git(t, m.Repo.Root, "add", ".litterbox.toml")
	testenv.Git(t, m.Repo.Root, "commit", "-qm", "build")
	_, err = m.Create(ctx, create.CreateOptions{Name: "untrusted"})
	if err == nil || !strings.Contains(err.Error(), "docker.build") || !strings.Contains(err.Error(), "litterbox trust") {
		t.Fatalf("untrusted committed build: %v", err)
	}
	assertNothingMade(t, m, "untrusted")
}

const cacheSetup = `mkdir -p node_modules/pkg && echo "$(cat package.json)" > node_modules/pkg/from-inputs && ` +
	`cat /proc/sys/kernel/random/uuid > node_modules/stamp && touch ran-setup.marker && echo home-of-setup > $HOME/from-setup`

// The setup cache on every image with a shell: the first create runs the
// setup and keeps what it added; the next skips it and gets the same
// files; a commit that leaves the inputs alone still hits, with its own
// tracked files; a changed input misses.
func TestIntegrationSetupCache(t *testing.T) {
	for _, image := range shellImages {
		t.Run(imageName(image), func(t *testing.T) {
			ctx := context.Background()
			m := repoManager(t, testenv.Files{
				"README.md":    "v1\n",
				"old.txt":      "deleted later\n",
				"package.json": `{"deps": 1}` + "\n",
				".gitignore":   "node_modules/\n*.marker\n",
				".litterbox.toml": "[docker]\nimage = \"" + image + "\"\nsetup-command = '" + cacheSetup + "'\n" +
					"[setup]\ninputs = [\"package.json\"]\n",
			}, "")
			first, err := m.Create(ctx, create.CreateOptions{Name: "first"})
			if err != nil {
				t.Fatal(err)
			}
			if sc := first.SetupCache; sc == nil || !sc.Saved || sc.Hit || sc.Files < 3 {
				t.Fatalf("first create kept no cache: %+v warnings %v", sc, first.Warnings)
			}
			stamp := exec(t, m, "first", "cat node_modules/stamp")

			second, err := m.Create(ctx, create.CreateOptions{Name: "second"})
			if err != nil {
				t.Fatal(err)
			}
			if sc := second.SetupCache; sc == nil || !sc.Hit || sc.From != "first" {
				t.Fatalf("second create missed: %+v", sc)
			}
			if got := exec(t, m, "second", "cat node_modules/stamp; ls -ld node_modules | cut -c1-10; stat -c %u node_modules/stamp"); got != stamp+"drwxr-xr-x\n1000\n" {
				t.Fatalf("second's node_modules: %q, want the stamp %q, owned by 1000", got, stamp)
			}
			if n := commitsOn(t, m, "second"); n != 0 {
				t.Fatalf("a create from the cache has %d commits over its base", n)
			}
			// Its /src lies over the entry's files (nothing copied), and
			// what it changes of them stays its own.
			kept, err := m.Creator.SetupCache().List(ctx)
			if err != nil || len(kept) != 1 {
				t.Fatalf("cache ls: %+v %v", kept, err)
			}
			if rec, _ := m.Repo.Store().Load("second"); rec.Layer == nil || rec.Layer.Cache != kept[0].Volume || rec.Layer.HomeUpper == "" {
				t.Fatalf("second's /src and home do not lie over the cache entry %s: %+v", kept[0].Volume, rec.Layer)
			}
			if got := exec(t, m, "second", "cat $HOME/from-setup && echo changed > node_modules/stamp && echo changed > $HOME/from-setup && stat -c %a%u $HOME"); got != "home-of-setup\n7770\n" {
				t.Fatalf("second's home: %q", got)
			}
			// A fork of it lies over the same entry and tree, with a copy
			// of its own layer and home.
			if _, err := m.Creator.Fork(ctx, create.ForkOptions{Source: "second", Name: "second-fork"}); err != nil {
				t.Fatal(err)
			}
			if rec, _ := m.Repo.Store().Load("second-fork"); rec.Layer == nil || rec.Layer.Cache != kept[0].Volume || rec.Layer.HomeUpper != "" {
				t.Fatalf("second's fork does not lie over the cache entry %s alone: %+v", kept[0].Volume, rec.Layer)
			}
			if got := exec(t, m, "second-fork", "cat node_modules/stamp node_modules/pkg/from-inputs $HOME/from-setup"); got != "changed\n"+`{"deps": 1}`+"\nchanged\n" {
				t.Fatalf("the fork of second holds %q", got)
			}
			if _, err := m.Delete(ctx, "second-fork", true); err != nil {
				t.Fatal(err)
			}
			// The agent's first change is committed as usual; the cached
			// files are ignored and stay out of it.
			if _, err := m.Agent.Write(ctx, "second", "agent.txt", []byte("x\n")); err != nil {
				t.Fatal(err)
			}
			if files := testenv.Git(t, m.Repo.Root, "diff", "--name-only", second.Base, "litterbox/second"); files != "agent.txt" {
				t.Fatalf("second's branch changed %q", files)
			}

			testenv.Git(t, m.Repo.Root, "rm", "-q", "old.txt")
			writeFile(t, filepath.Join(m.Repo.Root, "README.md"), "v2\n")
			testenv.Git(t, m.Repo.Root, "commit", "-qam", "v2")
			third, err := m.Create(ctx, create.CreateOptions{Name: "third"})
			if err != nil {
				t.Fatal(err)
			}
			if sc := third.SetupCache; sc == nil || !sc.Hit {
				t.Fatalf("a commit that left the inputs alone missed: %+v", sc)
			}
			if got := exec(t, m, "third", "cat README.md; test -e old.txt && echo old-is-back; cat node_modules/stamp $HOME/from-setup"); got != "v2\n"+stamp+"home-of-setup\n" {
				t.Fatalf("third holds %q", got)
			}

			writeFile(t, filepath.Join(m.Repo.Root, "package.json"), `{"deps": 2}`+"\n")
			testenv.Git(t, m.Repo.Root, "commit", "-qam", "deps")
			fourth, err := m.Create(ctx, create.CreateOptions{Name: "fourth"})
			if err != nil {
				t.Fatal(err)
			}
			if sc := fourth.SetupCache; sc == nil || sc.Hit || !sc.Saved {
				t.Fatalf("a changed input hit: %+v", sc)
			}
			if got := exec(t, m, "fourth", "cat node_modules/pkg/from-inputs"); got != `{"deps": 2}`+"\n" {
				t.Fatalf("fourth ran setup on %q", got)
			}
			entries, err := m.Creator.SetupCache().List(ctx)
			if err != nil || len(entries) != 2 {
				t.Fatalf("cache ls: %+v %v", entries, err)
			}
			// delete leaves the cache alone; prune keeps the entry HEAD
			// uses, and the one second's and third's /src lie over, which
			// rm refuses too until they are deleted.
			if _, err := m.Delete(ctx, "first", true); err != nil {
				t.Fatal(err)
			}
			if removed, kept, err := m.Creator.SetupCache().Prune(ctx); err != nil || len(removed) != 0 || len(kept) != 1 || kept[0].Key != entries[1].Key {
				t.Fatalf("prune removed %+v and kept %+v (%v) while sandboxes lie over the older entry", removed, kept, err)
			}
			var inUse *setupcache.InUseError
			if _, err := m.Creator.SetupCache().Remove(ctx, entries[1].Key[:8]); !errors.As(err, &inUse) || strings.Join(inUse.Sandboxes, ",") != "sandbox 'second',sandbox 'third'" {
				t.Fatalf("rm of an entry in use: %v", err)
			}
			for _, name := range []string{"second", "third"} {
				if _, err := m.Delete(ctx, name, true); err != nil {
					t.Fatal(err)
				}
				if out, _ := testenv.Docker("volume", "ls", "-q", "--filter", "name=^"+m.Repo.Names(name).Container+"-"); out != "" {
					t.Fatalf("delete of %s left volumes %s", name, out)
				}
			}
			removed, _, err := m.Creator.SetupCache().Prune(ctx)
			if err != nil || len(removed) != 1 || removed[0].Key != entries[1].Key {
				t.Fatalf("prune removed %+v (%v), want the older of %+v", removed, err, entries)
			}
			if _, err := testenv.Docker("volume", "inspect", entries[1].Volume); err == nil {
				t.Fatalf("pruned volume %s is still there", entries[1].Volume)
			}
			if _, err := m.Creator.SetupCache().Remove(ctx, entries[0].Key[:8]); err != nil {
				t.Fatal(err)
			}
			if left, _ := m.Creator.SetupCache().List(ctx); len(left) != 0 {
				t.Fatalf("after rm: %+v", left)
			}
		})
	}
}

// An entry removed after a create found it, before its /src is laid over
// it (cache rm from another terminal): the create does not use it, runs
// the setup, and keeps its result again.
func TestIntegrationSetupCacheEntryRemovedUnderACreate(t *testing.T) {
	ctx := context.Background()
	m := repoManager(t, testenv.Files{
		"README.md":       "hi\n",
		".gitignore":      "node_modules/\n",
		".litterbox.toml": "[docker]\nsetup-command = 'mkdir -p node_modules && cat /proc/sys/kernel/random/uuid > node_modules/stamp'\n",
	}, "")
	if _, err := m.Create(ctx, create.CreateOptions{Name: "first"}); err != nil {
		t.Fatal(err)
	}
	entries, err := m.Creator.SetupCache().List(ctx)
	if err != nil || len(entries) != 1 {
		t.Fatalf("cache ls: %+v %v", entries, err)
	}
	// The base tree is asked for its mark after the lookup, before the layer.
	hook := &beforeCommand{Inner: testenv.Exec(), Match: ".base-", Do: func() {
		if _, err := testenv.Docker("volume", "rm", entries[0].Volume); err != nil {
			t.Error(err)
		}
	}}
	useRunner(m, hook)
	second, err := m.Create(ctx, create.CreateOptions{Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if !hook.Fired() {
		t.Fatal("the create never asked for its base tree")
	}
	if sc := second.SetupCache; sc == nil || sc.Hit || !sc.Saved {
		t.Fatalf("second: cache %+v, want the setup run and kept", sc)
	}
	if rec, _ := m.Repo.Store().Load("second"); rec.Layer == nil || rec.Layer.Cache != "" {
		t.Fatalf("second's layer %+v, want none over a cache entry", rec.Layer)
	}
	if got := exec(t, m, "second", "test -s node_modules/stamp && echo ok"); got != "ok\n" {
		t.Fatalf("second's setup result: %q", got)
	}
}

// beforeCommand runs Do once, before the first command whose shell line
// holds Match.
type beforeCommand struct {
	Inner runner.Runner
	Match string
	Do    func()
	once  sync.Once
	fired atomic.Bool
}

func (b *beforeCommand) Run(ctx context.Context, c runner.Cmd) (runner.Result, error) {
	if strings.Contains(runner.ShellLine(c), b.Match) {
		b.once.Do(func() { b.Do(); b.fired.Store(true) })
	}
	return b.Inner.Run(ctx, c)
}

func (b *beforeCommand) Fired() bool { return b.fired.Load() }

// A setup that keeps nothing where the cache looks (its work went to
// /tmp) is not cached, and create says so: an empty entry would make the
// next create skip the setup and leave the sandbox without its work.
func TestIntegrationSetupCacheKeepsNoEmptyEntry(t *testing.T) {
	ctx := context.Background()
	m := repoManager(t, testenv.Files{
		"README.md":       "hi\n",
		".litterbox.toml": "[docker]\nsetup-command = \"mkdir -p /tmp/deps && echo made > /tmp/deps/lib\"\n",
	}, "")
	for _, name := range []string{"one", "two"} {
		c, err := m.Create(ctx, create.CreateOptions{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if sc := c.SetupCache; sc == nil || sc.Hit || sc.Saved || !strings.Contains(sc.NotKept, "left no file where the cache keeps them") {
			t.Fatalf("%s: cache %+v", name, c.SetupCache)
		}
		if got := exec(t, m, name, "cat /tmp/deps/lib"); got != "made\n" {
			t.Errorf("%s: the setup's work is missing: %q", name, got)
		}
	}
	if entries, err := m.Creator.SetupCache().List(ctx); err != nil || len(entries) != 0 {
		t.Errorf("entries %+v %v", entries, err)
	}
	if vols, _ := testenv.Docker("volume", "ls", "-q", "--filter", "label=dev.litterbox.managed=cache", "--filter", "label=dev.litterbox.repo="+m.Repo.Root); vols != "" {
		t.Errorf("cache volumes left: %s", vols)
	}
}

// A setup that changes tracked files is not cached: a later sandbox would
// hold those changes without the commit that explains them.
func TestIntegrationSetupCacheRefusesTrackedChanges(t *testing.T) {
	ctx := context.Background()
	m := repoManager(t, testenv.Files{
		"README.md":       "v1\n",
		".litterbox.toml": "[docker]\nsetup-command = \"echo generated >> README.md\"\n",
	}, "")
	c, err := m.Create(ctx, create.CreateOptions{Name: "one"})
	if err != nil {
		t.Fatal(err)
	}
	if c.SetupCache != nil || !strings.Contains(strings.Join(c.Warnings, "\n"), "setup cache: not kept, because the setup command changed tracked files") {
		t.Fatalf("cache %+v warnings %v", c.SetupCache, c.Warnings)
	}
	c2, err := m.Create(ctx, create.CreateOptions{Name: "two"})
	if err != nil || c2.SetupCache != nil || c2.Setup.Snapshot == "" {
		t.Fatalf("second: %+v %v", c2, err)
	}
}

func commitsOn(t *testing.T, m *Manager, slug string) int {
	t.Helper()
	rec, err := m.Repo.Store().Load(slug)
	if err != nil || rec == nil {
		t.Fatalf("record of %s: %v", slug, err)
	}
	return len(strings.Fields(testenv.Git(t, m.Repo.Root, "rev-list", rec.Base+"..litterbox/"+slug)))
}

// Fork on the whole matrix: the new sandbox starts at the source's tip,
// with its files (an ignored build directory too); the two then go their
// own ways, and the source never stopped.
func TestIntegrationFork(t *testing.T) {
	for _, image := range slices.Concat(shellImages, []string{noShellImage}) {
		t.Run(imageName(image), func(t *testing.T) {
			ctx := context.Background()
			dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbfork"))
			testenv.NewRepo(t, dir, testenv.Files{"README.md": "hi\n", ".gitignore": "build/\n"})
			m := imageManager(t, dir, image)
			if _, err := m.Create(ctx, create.CreateOptions{Name: "src"}); err != nil {
				t.Fatal(err)
			}
			for p, body := range map[string]string{"work.txt": "agent work\n", "build/out.bin": "compiled\n"} {
				if _, err := m.Agent.Write(ctx, "src", p, []byte(body)); err != nil {
					t.Fatal(err)
				}
			}
			c, err := m.Creator.Fork(ctx, create.ForkOptions{Source: "src", Name: "copy"})
			if err != nil {
				t.Fatal(err)
			}
			srcTip := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/src")
			if tip := testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/copy"); tip != srcTip || c.ForkedFrom != "src" || c.Status != create.StatusActive {
				t.Fatalf("fork at %s, source at %s: %+v", tip, srcTip, c)
			}
			if got := readFile(t, m, "copy", "build/out.bin") + readFile(t, m, "copy", "work.txt"); got != "compiled\nagent work\n" {
				t.Fatalf("fork holds %q", got)
			}
			if _, err := m.Agent.Write(ctx, "copy", "work.txt", []byte("fork's own\n")); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, m, "src", "work.txt"); got != "agent work\n" {
				t.Fatalf("the fork's write reached the source: %q", got)
			}
			if testenv.Git(t, m.Repo.Root, "rev-parse", "litterbox/src") != srcTip {
				t.Fatal("the fork's write moved the source's branch")
			}
			if got := testenv.Git(t, m.Repo.Root, "diff", "--name-only", srcTip, "litterbox/copy"); got != "work.txt" {
				t.Fatalf("the fork's first commit changed %q", got)
			}
			infos, err := m.List(ctx, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range infos {
				if i.Status != create.StatusActive {
					t.Fatalf("%s is %s after the fork", i.Name, i.Status)
				}
			}
		})
	}
}

// A paused source forks too (it is not unpaused), and the bad inputs fail
// in one line with nothing made.
func TestIntegrationForkEdges(t *testing.T) {
	ctx := context.Background()
	m := repoManager(t, testenv.Files{"README.md": "hi\n"}, "")
	if _, err := m.Create(ctx, create.CreateOptions{Name: "src"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "taken"}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Pause(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Creator.Fork(ctx, create.ForkOptions{Source: "src", Name: "from-paused"}); err != nil {
		t.Fatalf("fork of a paused sandbox: %v", err)
	}
	if in, _ := m.Repo.Provider.Inspect(ctx, m.Repo.Names("src").Container); in.State != "paused" {
		t.Fatalf("the source is %s after the fork", in.State)
	}
	var exists *create.ExistsError
	if _, err := m.Creator.Fork(ctx, create.ForkOptions{Source: "src", Name: "taken"}); !errors.As(err, &exists) {
		t.Fatalf("fork onto an existing name: %v", err)
	}
	var nf *hostrepo.NotFoundError
	if _, err := m.Creator.Fork(ctx, create.ForkOptions{Source: "nope", Name: "x"}); !errors.As(err, &nf) {
		t.Fatalf("fork of an unknown sandbox: %v", err)
	}
	if _, err := os.Stat(m.Repo.Layout().Record("x")); err == nil || testenv.Git(t, m.Repo.Root, "for-each-ref", "refs/heads/litterbox/x") != "" {
		t.Fatal("a fork of an unknown sandbox left state or a branch")
	}
	if _, err := m.Creator.Fork(ctx, create.ForkOptions{Source: "src", Name: "!!!"}); err == nil || !strings.Contains(err.Error(), "invalid sandbox name") {
		t.Fatalf("fork to a bad name: %v", err)
	}
}

// devcontainer.json, image form: the image, the environment (with the
// image's own PATH filled in), the three command forms as the setup, and
// what Litterbox does not do named in Notes.
func TestIntegrationDevcontainerImage(t *testing.T) {
	ctx := context.Background()
	m := repoManager(t, testenv.Files{
		"README.md":  "hi\n",
		".gitignore": "*.out\n",
		".devcontainer/devcontainer.json": `{
  // The image form, as most projects write it.
  "name": "demo",
  "image": "litterbox-test/debian:bookworm",
  "containerEnv": {"GREETING": "hello", "TOOLS": "${containerEnv:PATH}:/opt/tools"},
  "onCreateCommand": "echo on-create > a.out",
  "updateContentCommand": ["sh", "-c", "echo \"$GREETING\" > b.out"],
  "postCreateCommand": {"one": "echo one > c.out", "two": ["touch", "d.out"]},
  "features": {"ghcr.io/devcontainers/features/node:1": {}},
  "postStartCommand": "echo never",
}
`,
	}, "")
	c, err := m.Create(ctx, create.CreateOptions{Name: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != create.StatusActive || c.Image != "litterbox-test/debian:bookworm" || strings.Join(c.ConfigFiles, ",") != ".devcontainer/devcontainer.json" {
		t.Fatalf("created %+v", c)
	}
	if got := exec(t, m, "dev", "cat a.out b.out c.out; test -f d.out && echo d; echo $TOOLS"); got != "on-create\nhello\none\nd\n/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/tools\n" {
		t.Fatalf("setup and env gave %q", got)
	}
	notes := strings.Join(c.Notes, "\n")
	for _, want := range []string{"features (ghcr.io/devcontainers/features/node:1): not supported", "postStartCommand: not run"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes %q lack %q", notes, want)
		}
	}
}

// A devcontainer.json setup command that fails (npm, in an image without
// it, with no network) leaves a usable sandbox, and the explanation names
// the file, the network and the way to turn it off; a retry says the
// sandbox is there to use. A local file choosing the image makes the
// devcontainer.json a suggestion not taken: its setup does not run.
func TestIntegrationDevcontainerSetupFailure(t *testing.T) {
	ctx := context.Background()
	files := testenv.Files{
		"README.md":                       "hi\n",
		".devcontainer/devcontainer.json": `{"image": "litterbox-test/debian:bookworm", "onCreateCommand": "npm install && pip install -r requirements.txt"}`,
	}
	m := repoManager(t, files, "")
	c, err := m.Create(ctx, create.CreateOptions{Name: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != create.StatusFailedSetup || c.Setup.ExitCode != 127 || c.SetupFrom != ".devcontainer/devcontainer.json" {
		t.Fatalf("created %+v", c)
	}
	// What the explanation is made of (present's tests check its words).
	if c.Network != "none" || c.SetupNetwork != "" || c.Setup.Command != "npm install && pip install -r requirements.txt" {
		t.Errorf("network %q, setup network %q, command %q", c.Network, c.SetupNetwork, c.Setup.Command)
	}
	if got := exec(t, m, "dev", "echo usable"); got != "usable\n" {
		t.Errorf("the sandbox: %q", got)
	}
	if _, err := m.Create(ctx, create.CreateOptions{Name: "dev"}); err == nil || !strings.Contains(err.Error(), "sandbox 'dev' already exists; please choose a different name (made before, its setup command failed; it is usable as it is: use it by this name)") {
		t.Errorf("a retry: %v", err)
	}

	m = repoManager(t, files, "[docker]\nimage = \"litterbox-test/debian:bookworm\"\n")
	if c, err = m.Create(ctx, create.CreateOptions{Name: "chosen"}); err != nil {
		t.Fatal(err)
	}
	if c.Status != create.StatusActive || c.Setup.Command != config.DefaultSetup || strings.Join(c.ConfigFiles, ",") != config.LocalFile ||
		!slices.Contains(c.Notes, ".devcontainer/devcontainer.json: not used, because .litterbox.local.toml chooses the image; its setup command and settings are for its own") {
		t.Errorf("with the image chosen: status %s setup %q files %q notes %q", c.Status, c.Setup.Command, c.ConfigFiles, c.Notes)
	}
}

// devcontainer.json, build form: the Dockerfile next to it, a user named
// in the image, forwardPorts named from portsAttributes; its loosening
// (a build, a port) needs trust like .litterbox.toml's, and
// .litterbox.toml wins key by key.
func TestIntegrationDevcontainerBuild(t *testing.T) {
	ctx := context.Background()
	m := repoManager(t, testenv.Files{
		"README.md":                "hi\n",
		".devcontainer/Dockerfile": "FROM litterbox-test/debian:bookworm\nRUN useradd -u 1234 -m dev\n",
		".devcontainer/devcontainer.json": `{
  "build": {"dockerfile": "Dockerfile", "context": ".."},
  "remoteUser": "dev",
  "postCreateCommand": "id -u > uid.txt",
  "forwardPorts": [8080],
  "portsAttributes": {"8080": {"label": "Web App"}}
}
`,
		".litterbox.toml": "[docker]\nsetup-command = \"id -u > from-toml.txt\"\n",
	}, "")
	_, err := m.Create(ctx, create.CreateOptions{Name: "dev"})
	if err == nil || !strings.HasPrefix(err.Error(), ".devcontainer/devcontainer.json sets ") || !strings.Contains(err.Error(), "litterbox trust") {
		t.Fatalf("untrusted devcontainer.json: %v", err)
	}
	assertNothingMade(t, m, "dev")
	if _, err := m.Trust(); err != nil {
		t.Fatal(err)
	}
	c, err := m.Create(ctx, create.CreateOptions{Name: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Build == nil || len(c.Ports) != 1 || c.Ports[0].Name != "web-app" || c.Ports[0].ContainerPort != 8080 {
		t.Fatalf("build %+v ports %+v", c.Build, c.Ports)
	}
	if got := exec(t, m, "dev", "cat from-toml.txt; test -e uid.txt || echo no-devcontainer-setup; echo $PORT_WEB_APP"); got != fmt.Sprintf("1234\nno-devcontainer-setup\n%d\n", c.Ports[0].HostPort) {
		t.Fatalf("sandbox says %q", got)
	}
}

// Bad devcontainer.json files fail create in one line naming the file
// (and the line, for JSON that does not parse), with nothing made.
func TestIntegrationDevcontainerFailures(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct{ file, want string }{
		"invalid-jsonc":  {"{\n  \"image\": \"busybox:latest\",\n  oops\n}\n", ".devcontainer/devcontainer.json: line 3"},
		"unknown-user":   {`{"image": "busybox:latest", "remoteUser": "nobody-here"}`, `.devcontainer/devcontainer.json: remoteUser "nobody-here" is not in image busybox:latest's /etc/passwd`},
		"compose":        {`{"dockerComposeFile": "compose.yml", "service": "app"}`, ".devcontainer/devcontainer.json: "},
		"missing-docker": {`{"build": {"dockerfile": "Nope"}}`, "[docker] build: no Dockerfile at .devcontainer/Nope"},
	} {
		t.Run(name, func(t *testing.T) {
			m := repoManager(t, testenv.Files{"README.md": "hi\n", ".devcontainer/devcontainer.json": tc.file}, "")
			_, _ = m.Trust() // the config may not even load: create says why
			_, err := m.Create(ctx, create.CreateOptions{Name: "dev"})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want a line starting %q", err, tc.want)
			}
			assertNothingMade(t, m, "dev")
		})
	}
}

// An entry whose volume was removed behind Litterbox's back (docker volume
// prune) is a miss, and that create keeps a new one.
func TestIntegrationSetupCacheVolumeGone(t *testing.T) {
	ctx := context.Background()
	m := repoManager(t, testenv.Files{
		"README.md":       "v1\n",
		".gitignore":      "out/\n",
		".litterbox.toml": "[docker]\nsetup-command = \"mkdir -p out && echo built > out/x\"\n",
	}, "")
	if c, err := m.Create(ctx, create.CreateOptions{Name: "one"}); err != nil || c.SetupCache == nil || !c.SetupCache.Saved {
		t.Fatalf("first: %+v %v", c, err)
	}
	entries, err := m.Creator.SetupCache().List(ctx)
	if err != nil || len(entries) != 1 {
		t.Fatalf("entries %+v %v", entries, err)
	}
	if out, err := testenv.Docker("volume", "rm", entries[0].Volume); err != nil {
		t.Fatalf("volume rm: %v %s", err, out)
	}
	c, err := m.Create(ctx, create.CreateOptions{Name: "two"})
	if err != nil || c.SetupCache == nil || !c.SetupCache.Saved || c.SetupCache.Hit {
		t.Fatalf("after the volume went: %+v %v", c.SetupCache, err)
	}
	if got := exec(t, m, "two", "cat out/x"); got != "built\n" {
		t.Fatalf("out/x = %q", got)
	}
	c, err = m.Create(ctx, create.CreateOptions{Name: "three"})
	if err != nil || c.SetupCache == nil || !c.SetupCache.Hit {
		t.Fatalf("third: %+v %v", c.SetupCache, err)
	}
}
