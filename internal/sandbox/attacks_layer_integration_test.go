//go:build integration

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/servicectl"

	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/setupcache"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// layerAttacks are rows for the base tree that sandboxes of one commit
// share (internal/basetree): what one sandbox does to its /src must never
// reach the tree under it, which its bystander and every later sandbox of
// that commit read.
var layerAttacks = []attack{
	{name: "a sandbox that rewrites, links, removes and retimes the shared base tree's files", side: "agent", gvisor: true, expect: "its own /src changes; the bystander over the same tree and a sandbox made after still read the commit's files, from the same tree", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		rec, _ := e.m.Repo.Store().Load("work")
		other, _ := e.m.Repo.Store().Load("other")
		if rec == nil || rec.Layer == nil || other == nil || other.Layer == nil || rec.Layer.Base != other.Layer.Base {
			t.Fatalf("work and other are not made over one base tree: %+v %+v", rec, other)
		}
		out := exec(t, e.m, "work", `cd /src
echo pwned > README.md
ln README.md hard 2>/dev/null; echo more >> hard
touch -d '2001-01-01' .gitignore
chmod 600 .gitignore
rm -rf /src/* /src/.gitignore
lower=$(sed -n 's/.*lowerdir=\([^,]*\).*/\1/p' /proc/self/mountinfo | head -n 1)
ls "$lower" 2>&1 | head -n 1
mount -o remount,rw /src 2>&1 | head -n 1
ls -A /src | tr '\n' ' '`)
		if strings.Contains(out, "README.md") {
			t.Errorf("the attacker's own removal did not hold: %q", out)
		}
		if _, err := e.m.Create(ctx, create.CreateOptions{Name: "later"}); err != nil {
			t.Fatal(err)
		}
		defer e.m.Delete(context.WithoutCancel(ctx), "later", true)
		if later, _ := e.m.Repo.Store().Load("later"); later == nil || later.Layer == nil || later.Layer.Base != rec.Layer.Base {
			t.Errorf("the later sandbox is not made over the same tree: %+v", later)
		}
		if got := exec(t, e.m, "later", `cd /src && ls -A | tr '\n' ' ' && cat README.md && stat -c '%a' .gitignore`); got != ".gitignore README.md hello\n644\n" {
			t.Errorf("a sandbox made after reads %q, want the commit's files", got)
		}
		// The attacker's own sandbox, as the next rows expect it.
		exec(t, e.m, "work", `printf 'hello\n' > /src/README.md && printf '.litterbox.local.toml\nnode_modules/\n' > /src/.gitignore`)
	}},
	{name: "a sandbox that rewrites, links, removes and swaps the setup cache entry's files under its /src and home", side: "agent", gvisor: true, expect: "its own /src and home change, and its fork holds them; a sandbox made after from the cache reads the entry's files as the setup made them, and the entry is not removed while any lies over it", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := freshRepo(t, e, "[docker]\nsetup-command = \"mkdir -p node_modules/pkg node_modules/dir && echo one > node_modules/pkg/a && echo two > node_modules/pkg/b && echo in > node_modules/dir/f && echo hidden > node_modules/dir/g && mkdir -p $HOME/.cache && echo home > $HOME/.cache/h\"\n")
		writeFile(t, filepath.Join(r.Repo.Root, ".gitignore"), "node_modules/\n")
		testenv.Git(t, r.Repo.Root, "add", ".gitignore")
		testenv.Git(t, r.Repo.Root, "commit", "-qm", "ignore node_modules")
		made, err := r.Create(ctx, create.CreateOptions{Name: "made"})
		if err != nil || made.SetupCache == nil || !made.SetupCache.Saved {
			t.Fatalf("the setup's result was not kept, so this row tests nothing: %+v %v", made, err)
		}
		over := layeredOverCache(t, r, "over")
		const list = `cd /src/node_modules && find . | sort | while read f; do if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; ` +
			`elif [ -f "$f" ]; then echo "$f $(stat -c '%a %u %Y' "$f") $(cat "$f")"; else echo "$f $(stat -c '%a %u' "$f")"; fi; done`
		want := exec(t, r, "made", list+"; cat $HOME/.cache/h; stat -c '%a %u' $HOME/.cache")
		exec(t, r, "over", `cd /src/node_modules
echo pwned > pkg/a
ln pkg/b hard 2>/dev/null; echo more >> hard
touch -d '2001-01-01' pkg/b
chmod 600 pkg/b
rm -rf dir && mkdir dir && echo swapped > dir/f
mv pkg pkg2 && ln -s / pkg
mknod w c 0 0 2>/dev/null
echo pwned > $HOME/.cache/h && chmod 700 $HOME/.cache && ln -s / $HOME/.cache/root
lower=$(sed -n 's/.*lowerdir=\([^:,]*\).*/\1/p' /proc/self/mountinfo | head -n 1)
ls "$lower" 2>&1 | head -n 1
true`)
		if got := exec(t, r, "over", "readlink /src/node_modules/pkg; cat /src/node_modules/dir/f $HOME/.cache/h"); got != "/\nswapped\npwned\n" {
			t.Errorf("the attacker's own changes did not hold: %q", got)
		}
		// A fork of the attacker lies over the same entry and copies only
		// its layer: it holds what the attacker's /src shows, the
		// directory removed and made again over the entry's included.
		if _, err := r.Creator.Fork(ctx, create.ForkOptions{Source: "over", Name: "overfork"}); err != nil {
			t.Fatal(err)
		}
		if rec, _ := r.Repo.Store().Load("overfork"); rec == nil || rec.Layer == nil || rec.Layer.Cache != over {
			t.Errorf("the fork does not lie over the entry %s: %+v", over, rec)
		}
		if got, want := exec(t, r, "overfork", list), exec(t, r, "over", list); got != want {
			t.Errorf("the fork's /src holds\n%s\nwant the attacker's\n%s", got, want)
		}
		later := layeredOverCache(t, r, "later")
		if later != over {
			t.Errorf("the later sandbox lies over %s, the attacker over %s", later, over)
		}
		if got := exec(t, r, "later", list+"; cat $HOME/.cache/h; stat -c '%a %u' $HOME/.cache"); got != want {
			t.Errorf("a sandbox made after from the cache reads\n%s\nwant what the setup made\n%s", got, want)
		}
		entries, _ := r.Creator.SetupCache().List(ctx)
		var inUse *setupcache.InUseError
		if len(entries) != 1 {
			t.Fatalf("cache entries %+v", entries)
		} else if _, err := r.Creator.SetupCache().Remove(ctx, entries[0].Key[:12]); !errors.As(err, &inUse) {
			t.Errorf("rm of the entry under two sandboxes: %v", err)
		}
	}},
	{name: "a fork while a background process of its source swaps the source's directories for links to / and its files for fifos, in a loop", side: "agent", gvisor: true, expect: "no read blocks on a fifo swapped in (the source's commit before the fork once waited for a writer until its deadline) and the copy reads through a root of the source's layer, leaving out what moved while it read: each fork is made, or refused in one line, within a minute, most are made, and one that is made holds nothing of the copy container's own files; the host is untouched", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := freshRepo(t, e, "")
		if _, err := r.Create(ctx, create.CreateOptions{Name: "src"}); err != nil {
			t.Fatal(err)
		}
		// Enough files that the copy lasts while the swaps run: the fork
		// settles its source in a quiet spell, and the copy starts about
		// when the next burst does.
		exec(t, r, "src", `cd /src && mkdir bulk && for i in $(seq 2000); do echo $i > bulk/$i; done && for i in $(seq 20); do mkdir -p swap$i && echo $i > swap$i/f && echo $i > file$i; done`)
		swap := `cd /src && while :; do sleep 2; end=$(( $(date +%s) + 3 )); while [ $(date +%s) -lt $end ]; do for i in $(seq 20); do ` +
			`mv swap$i s.$i; ln -s / swap$i; rm swap$i; mv s.$i swap$i; mv file$i f.$i; mkfifo file$i; rm file$i; mv f.$i file$i; done; done; done`
		if _, err := servicectl.Background(ctx, r.Repo, "src", "swapper", agent.BashOptions{Command: swap}); err != nil {
			t.Fatal(err)
		}
		forked := 0
		for i := range 3 {
			fctx, cancel := context.WithTimeout(ctx, time.Minute)
			name := fmt.Sprintf("copy%d", i)
			_, err := r.Creator.Fork(fctx, create.ForkOptions{Source: "src", Name: name})
			cancel()
			if err != nil {
				if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("fork %d: %q, want it made or refused in one line within a minute", i, err)
				}
				t.Logf("fork %d refused: %v", i, err)
				continue
			}
			forked++
			if got := exec(t, r, name, `find /src -name passwd -o -name hostname -o -name self -o -name .litterbox | head -n 3`); got != "" {
				t.Errorf("fork %d holds the copy container's own files: %q", i, got)
			}
		}
		// What the swaps move while a copy reads it is left out, so a fork
		// is refused only when an entry moved and moved back before the
		// copy looked again.
		if t.Logf("%d of 3 forks made", forked); forked == 0 {
			t.Error("no fork made: a source whose files move while they are copied cannot be forked")
		}
	}},
}

// layeredOverCache creates sandbox name, which must come from the setup
// cache with its /src over the entry, and returns the entry's volume.
func layeredOverCache(t *testing.T, r *Manager, name string) string {
	t.Helper()
	c, err := r.Create(context.Background(), create.CreateOptions{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := r.Repo.Store().Load(name)
	if c.SetupCache == nil || !c.SetupCache.Hit || rec == nil || rec.Layer == nil || rec.Layer.Cache == "" {
		t.Fatalf("%s is not made over the setup cache entry, so this row tests nothing: %+v %+v", name, c.SetupCache, rec)
	}
	return rec.Layer.Cache
}
