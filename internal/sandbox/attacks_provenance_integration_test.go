//go:build integration

package sandbox

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// provenanceAttacks are the attack table's rows on what an agent's commit
// may reach through a base_ref: the privileged steps of a create (the
// setup's network, writing the setup cache) take only a person's commits
// (hostrepo.Persons).
var provenanceAttacks = []attack{
	{name: "a setup cache entry made from the agent's branch, served to a person's create", side: "agent", expect: "the scratch sandbox made from the agent's branch runs its setup but keeps nothing in the cache, and says so in one line; the person's create after merging the lock bump misses the cache and runs the reviewed setup: no planted file in its home or ignored directories", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := provenanceRepo(t, e, "[docker]\nsetup-command = \"sh setup.sh\"\n[setup]\ninputs = [\"deps.lock\"]\n")
		if _, err := r.Create(ctx, create.CreateOptions{Name: "a"}); err != nil {
			t.Fatal(err)
		}
		// The agent: lock v2 and a setup script that plants files, on its
		// branch; a scratch sandbox from that branch, as sandbox-create
		// with base_ref would make it.
		agentBash(t, r, "a", `echo v2 > deps.lock && printf 'echo planted > "$HOME/.planted"; mkdir -p node_modules; echo planted > node_modules/planted\n' > setup.sh`)
		scratch, err := r.Create(ctx, create.CreateOptions{Name: "scratch", BaseRef: "litterbox/a", MayBaseOn: func(s string) bool { return s == "a" || s == "scratch" }})
		if err != nil {
			t.Fatal(err)
		}
		if got := exec(t, r, "scratch", "cat $HOME/.planted"); got != "planted\n" {
			t.Fatalf("the agent's setup did not run in its scratch sandbox, so this row tests nothing: %q", got)
		}
		if scratch.SetupCache != nil && scratch.SetupCache.Saved {
			t.Errorf("the scratch sandbox from the agent's branch kept its setup in the cache: %+v", scratch.SetupCache)
		}
		if !hasWarning(scratch.Warnings, "is an agent's commit (no branch, tag or HEAD of yours reaches it): the setup cache keeps nothing of it") {
			t.Errorf("create did not say the base is an agent's: %q", scratch.Warnings)
		}
		// The agent's branch as reviewed: the lock bump alone.
		agentBash(t, r, "a", "cat > setup.sh <<'EOF'\n"+benignSetup+"EOF")
		if d := testenv.Git(t, r.Repo.Root, "diff", "--stat", "HEAD", "litterbox/a"); !strings.Contains(d, "deps.lock") || strings.Contains(d, "setup.sh") {
			t.Fatalf("the reviewed branch is not the lock bump alone: %s", d)
		}
		if _, _, err := r.Merge(ctx, "a", review.Options{Stdout: io.Discard, Stderr: io.Discard}); err != nil {
			t.Fatal(err)
		}
		fresh, err := r.Create(ctx, create.CreateOptions{Name: "fresh"})
		if err != nil {
			t.Fatal(err)
		}
		if fresh.SetupCache != nil && fresh.SetupCache.Hit {
			t.Errorf("the person's create was served from the agent's cache entry: %+v", fresh.SetupCache)
		}
		if got := exec(t, r, "fresh", "cat $HOME/.planted node_modules/planted 2>&1; true"); strings.Contains(got, "planted\n") {
			t.Errorf("the person's fresh sandbox holds the agent's planted files: %q", got)
		}
	}},
	{name: "the setup network running the agent's setup script through base_ref", side: "agent", expect: "a sandbox made from the agent's branch runs its setup with no network (its setup sees loopback alone), and create says so in one line; a person's create from HEAD still has the setup network", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := provenanceRepo(t, e, "[docker]\nsetup-command = \"sh setup.sh\"\n[network]\nsetup = \"open\"\n")
		if _, err := r.Create(ctx, create.CreateOptions{Name: "a"}); err != nil {
			t.Fatal(err)
		}
		if got := exec(t, r, "a", "cat node_modules/nets"); !strings.Contains(got, "eth0") {
			t.Fatalf("the person's setup had no network, so this row tests nothing: %q", got)
		}
		agentBash(t, r, "a", `printf 'mkdir -p node_modules; cat /proc/net/dev > node_modules/nets; echo agent > node_modules/ran\n' > setup.sh`)
		b, err := r.Create(ctx, create.CreateOptions{Name: "b", BaseRef: "litterbox/a", MayBaseOn: func(s string) bool { return s == "a" || s == "b" }})
		if err != nil {
			t.Fatal(err)
		}
		if got := exec(t, r, "b", "cat node_modules/ran"); got != "agent\n" {
			t.Fatalf("the agent's setup did not run, so this row tests nothing: %q", got)
		}
		if got := exec(t, r, "b", "cat node_modules/nets"); strings.Contains(got, "eth0") {
			t.Errorf("the agent's setup script ran with the setup network:\n%s", got)
		}
		if b.SetupNetwork != "" || !hasWarning(b.Warnings, "is an agent's commit (no branch, tag or HEAD of yours reaches it): its setup ran without the setup network") {
			t.Errorf("create from the agent's branch: setup network %q, warnings %q", b.SetupNetwork, b.Warnings)
		}
		// A commit of the agent's named by id is the agent's too; once a
		// branch of the person's holds it, it is the person's.
		tip := testenv.Git(t, r.Repo.Root, "rev-parse", "litterbox/a")
		if persons, err := r.Repo.Persons(ctx, tip); err != nil || persons {
			t.Errorf("the agent's tip is the person's: %v %v", persons, err)
		}
		testenv.Git(t, r.Repo.Root, "branch", "taken", tip)
		if persons, err := r.Repo.Persons(ctx, tip); err != nil || !persons {
			t.Errorf("a commit on the person's branch is not theirs: %v %v", persons, err)
		}
	}},
	{name: "a .gitattributes naming the user's filter for the agent's files, in its calls and in a sandbox made from its branch", side: "agent", expect: "the user's clean and smudge filters never run on the agent's files: the call commits them as written and names them in its result; a sandbox made from the branch holds every file as committed, those the attributes mark export-ignore and export-subst included", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := provenanceRepo(t, e, "[docker]\n")
		ran := markingDrivers(t, r, "tr a-z A-Z")
		testenv.Git(t, r.Repo.Root, "config", "filter.mark.clean", "touch "+runner.Quote(ran)+"; tr a-z A-Z")
		// The person's own export rules, which a checkout ignores.
		writeFile(t, filepath.Join(r.Repo.Root, ".gitattributes"), "/tests export-ignore\nver.txt export-subst\n")
		if err := os.MkdirAll(filepath.Join(r.Repo.Root, "tests"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(r.Repo.Root, "tests", "t"), "test\n")
		writeFile(t, filepath.Join(r.Repo.Root, "ver.txt"), "$Format:%H$\n")
		testenv.Git(t, r.Repo.Root, "add", "-A")
		testenv.Git(t, r.Repo.Root, "commit", "-qm", "export rules")
		if _, err := r.Create(ctx, create.CreateOptions{Name: "a"}); err != nil {
			t.Fatal(err)
		}
		if got := exec(t, r, "a", "cat tests/t ver.txt"); got != "test\n$Format:%H$\n" {
			t.Errorf("a sandbox of the person's commit holds %q, not its committed files", got)
		}
		res, err := r.Agent.Bash(ctx, "a", agent.BashOptions{Command: `printf '* filter=mark\n/kept export-ignore\n' >> .gitattributes && echo quiet > b.txt && mkdir kept && echo kept > kept/x`})
		if err != nil {
			t.Fatal(err)
		}
		if got := testenv.Git(t, r.Repo.Root, "cat-file", "blob", "litterbox/a:b.txt"); got != "quiet" {
			t.Errorf("b.txt committed as %q, want it as written", got)
		}
		if !slices.Contains(res.Unfiltered, "b.txt") || !slices.Contains(res.Unfiltered, "kept/x") {
			t.Errorf("the result names %q as committed without their filter, want b.txt and kept/x", res.Unfiltered)
		}
		if _, err := r.Create(ctx, create.CreateOptions{Name: "b", BaseRef: "litterbox/a", MayBaseOn: func(s string) bool { return s == "a" || s == "b" }}); err != nil {
			t.Fatal(err)
		}
		if got := exec(t, r, "b", "cat b.txt kept/x tests/t ver.txt"); got != "quiet\nkept\ntest\n$Format:%H$\n" {
			t.Errorf("the sandbox made from the agent's branch holds %q, not its committed files", got)
		}
		if _, err := os.Stat(ran); err == nil {
			t.Error("the user's clean or smudge filter ran on the agent's files")
		}
	}},
}

// benignSetup is the reviewed setup script: it notes the interfaces it
// sees and that it ran, in an ignored directory.
const benignSetup = "mkdir -p node_modules; cat /proc/net/dev > node_modules/nets; echo setup > node_modules/ran\n"

// provenanceRepo is a repository with a benign setup script and a lock,
// whose Manager reads local (the person's own config, which needs no
// trust) as create does.
func provenanceRepo(t *testing.T, e *attackEnv, local string) *Manager {
	t.Helper()
	r := buildRepo(t, testenv.Files{"setup.sh": benignSetup, "deps.lock": "v1\n"})
	writeFile(t, filepath.Join(r.Repo.Root, ".gitignore"), ".env\n.litterbox.local.toml\nnode_modules/\n")
	testenv.Git(t, r.Repo.Root, "commit", "-qam", "ignore node_modules")
	writeFile(t, filepath.Join(r.Repo.Root, ".litterbox.local.toml"), strings.Replace(local, "[docker]\n", "[docker]\nimage = \""+e.image+"\"\n", 1))
	return r
}

func agentBash(t *testing.T, r *Manager, name, cmd string) {
	t.Helper()
	if res, err := r.Agent.Bash(context.Background(), name, agent.BashOptions{Command: cmd}); err != nil || res.Snapshot == "" {
		t.Fatalf("bash %q in %s: %+v %v", cmd, name, res, err)
	}
}

func hasWarning(ws []string, part string) bool {
	for _, w := range ws {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}
