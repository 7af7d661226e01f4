//go:build integration

package sandbox

import (
	"context"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/create"
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
}
