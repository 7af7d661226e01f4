//go:build integration

package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/internal/steering"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// buildAttacks are the attack table's rows for the image build: trust and inputs (issue 27, item 4).
var buildAttacks = []attack{
	{name: "Dockerfile rewritten by the agent and merged", side: "agent", expect: "review names the Dockerfile as steering; after a merge the next create refuses until litterbox trust, then builds", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := buildRepo(t, testenv.Files{
			"Dockerfile":      "FROM " + e.image + "\n",
			".litterbox.toml": "[docker]\nbuild = \"Dockerfile\"\n",
		})
		if _, err := r.Trust(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Create(ctx, create.CreateOptions{Name: "w"}); err != nil {
			t.Fatal(err)
		}
		res, err := r.Agent.Bash(ctx, "w", agent.BashOptions{Command: `printf 'FROM busybox:latest\nRUN echo pwned > /pwned\n' > Dockerfile`})
		if err != nil || res.Snapshot == "" {
			t.Fatalf("%+v %v", res, err)
		}
		cs, _, err := r.ControlChanges(ctx, "w")
		if err != nil || len(cs) != 1 || cs[0].Path != "Dockerfile" || cs[0].What != steering.SteersBuild {
			t.Fatalf("review names %v (%v), want Dockerfile as the image build", cs, err)
		}
		testenv.Git(t, r.Repo.Root, "merge", "-q", "--no-edit", "litterbox/w")
		var bt *image.BuildTrustError
		_, err = r.Create(ctx, create.CreateOptions{Name: "next"})
		if !errors.As(err, &bt) || !bt.Changed || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "litterbox trust") {
			t.Fatalf("create after the merge: %v", err)
		}
		t.Logf("refused: %v", err)
		if refs := testenv.Git(t, r.Repo.Root, "for-each-ref", "refs/heads/litterbox/next"); refs != "" {
			t.Fatalf("a refused create left %s", refs)
		}
		// An agent's base_ref does not get around it either.
		if _, err := r.Create(ctx, create.CreateOptions{Name: "next", BaseRef: "litterbox/w"}); !errors.As(err, &bt) {
			t.Fatalf("create from the agent's branch: %v", err)
		}
		if _, err := r.Trust(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Create(ctx, create.CreateOptions{Name: "next"}); err != nil {
			t.Fatalf("create after trust: %v", err)
		}
		if got := readFile(t, r, "next", "/pwned"); got != "pwned\n" {
			t.Fatalf("the trusted build did not run: %q", got)
		}
	}},
	{name: "build context from the host's work tree", side: "repo", expect: "the image holds the committed Dockerfile's build of committed files only: no untracked .env, no .git with its remote URL's credential, no uncommitted Dockerfile", run: func(t *testing.T, e *attackEnv) {
		buildReadsOnlyTheCommit(t, e.image)
	}},
	{name: "build reaches the host's bridge", side: "repo", expect: "a RUN step cannot reach a listener on the default bridge (reachable from an ordinary container) unless [network] setup is open, and never when the base is an agent's commit (its Dockerfile, through base_ref)", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		ip := bridgeListener(t)
		// A token of this run's own keeps the engine's layer cache of
		// another run (or of the other phase) from answering for this one.
		token := testenv.UniqueName("probe")
		dockerfile := func(phase string) string {
			return "FROM busybox:latest\nRUN if nc -w 2 " + ip + " 8080 </dev/null; then echo reached; else echo blocked; fi > /reach # " + token + " " + phase + "\n"
		}
		r := buildRepo(t, testenv.Files{"Dockerfile": dockerfile("none")})
		writeFile(t, filepath.Join(r.Repo.Root, ".litterbox.local.toml"), "[docker]\nbuild = \"Dockerfile\"\n")
		if _, err := r.Create(ctx, create.CreateOptions{Name: "none"}); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, r, "none", "/reach"); got != "blocked\n" {
			t.Fatalf("the build without a setup network: %q", got)
		}
		writeFile(t, filepath.Join(r.Repo.Root, "Dockerfile"), dockerfile("open"))
		testenv.Git(t, r.Repo.Root, "commit", "-qam", "phase two")
		writeFile(t, filepath.Join(r.Repo.Root, ".litterbox.local.toml"), "[docker]\nbuild = \"Dockerfile\"\n[network]\nsetup = \"open\"\n")
		if _, err := r.Create(ctx, create.CreateOptions{Name: "open"}); err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, r, "open", "/reach"); got != "reached\n" {
			t.Fatalf("the build with the setup network open: %q", got)
		}
		// The agent's Dockerfile, built from its branch through base_ref:
		// not a person's commit, so no network (provenance).
		if res, err := r.Agent.Bash(ctx, "open", agent.BashOptions{Command: "cat > Dockerfile <<'EOF'\n" + dockerfile("agent") + "EOF"}); err != nil || res.Snapshot == "" {
			t.Fatalf("%+v %v", res, err)
		}
		made, err := r.Create(ctx, create.CreateOptions{Name: "agent", BaseRef: "litterbox/open"})
		if err != nil {
			t.Fatal(err)
		}
		if got := readFile(t, r, "agent", "/reach"); got != "blocked\n" {
			t.Errorf("the agent's build, from its branch, with the setup network open: %q", got)
		}
		if !hasWarning(made.Warnings, "its image was built with no network") {
			t.Errorf("create did not say so: %q", made.Warnings)
		}
	}},
	{name: "steering files written by the agent", side: "agent", expect: "review names each: agent instructions, hook managers, Dockerfiles, and what the host repository's core.hooksPath points at; not an ordinary file", run: func(t *testing.T, e *attackEnv) {
		ctx := context.Background()
		r := freshRepo(t, e, "")
		testenv.Git(t, r.Repo.Root, "config", "core.hooksPath", "ci/hooks")
		if _, err := r.Create(ctx, create.CreateOptions{Name: "w"}); err != nil {
			t.Fatal(err)
		}
		want := []string{".cursorignore", "CLAUDE.md", "pkg/AGENTS.md", ".github/copilot-instructions.md", ".husky/pre-commit",
			".githooks/pre-commit", ".pre-commit-config.yaml", "Dockerfile", ".dockerignore", "ci/hooks/pre-commit"}
		script := "mkdir -p pkg .github .husky .githooks ci/hooks && for f in " + strings.Join(want, " ") + " notes/plain.txt; do mkdir -p $(dirname $f); echo x > $f; done"
		if res, err := r.Agent.Bash(ctx, "w", agent.BashOptions{Command: script}); err != nil || res.Snapshot == "" {
			t.Fatalf("%+v %v", res, err)
		}
		cs, _, err := r.ControlChanges(ctx, "w")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.Path)
			if c.Path == "ci/hooks/pre-commit" && !strings.Contains(c.What, "core.hookspath") {
				t.Errorf("ci/hooks/pre-commit steers %q, want it named by core.hooksPath", c.What)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("review names %q\nwant %q", got, want)
		}
	}},
}

// buildRepo is a repository of files (committed) whose Manager reads the
// config files at every create, as the CLI does, with an ignored .env and
// .litterbox.local.toml; everything made for it, built images included,
// goes when the test ends.
func buildRepo(t *testing.T, files testenv.Files) *Manager {
	t.Helper()
	files["README.md"] = "hi\n"
	files[".gitignore"] = ".env\n.litterbox.local.toml\n"
	dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbbuild"))
	testenv.NewRepo(t, dir, files)
	m, err := OpenRepo(context.Background(), testenv.Exec(), engine.Docker, hostrepo.Location{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	testenv.CleanupRepo(t, m.Repo.Root, m.Repo.RepoSlug)
	return m
}

// buildReadsOnlyTheCommit builds, from a trusted committed config, a
// Dockerfile that copies its whole context, while the work tree holds an
// ignored .env with a secret, a credential in .git/config's remote URL and
// an uncommitted Dockerfile that would copy the .env: the image has the
// committed files and nothing else.
func buildReadsOnlyTheCommit(t *testing.T, image string) {
	ctx := context.Background()
	r := buildRepo(t, testenv.Files{
		"Dockerfile":      "FROM " + image + "\nCOPY . /ctx/\n",
		"src/app.txt":     "committed\n",
		".litterbox.toml": "[docker]\nbuild = \"Dockerfile\"\n",
	})
	if _, err := r.Trust(); err != nil {
		t.Fatal(err)
	}
	const secret, cred = "ENV-SECRET-4711", "ghp_CREDENTIAL0815"
	writeFile(t, filepath.Join(r.Repo.Root, ".env"), "TOKEN="+secret+"\n")
	testenv.Git(t, r.Repo.Root, "remote", "add", "origin", "https://user:"+cred+"@example.com/x.git")
	writeFile(t, filepath.Join(r.Repo.Root, "Dockerfile"), "FROM "+image+"\nCOPY . /ctx/\nCOPY .env /leaked-env\n")
	if data, err := os.ReadFile(filepath.Join(r.Repo.GitDir, "config")); err != nil || !strings.Contains(string(data), cred) {
		t.Fatalf("the host's .git/config should hold the credential: %v", err)
	}
	c, err := r.Create(ctx, create.CreateOptions{Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Build == nil || c.Build.Cached {
		t.Fatalf("no build ran: %+v", c.Build)
	}
	got := exec(t, r, "b", "cd /ctx && find . | sort; test -e /leaked-env && echo LEAKED; grep -rl -e "+secret+" -e "+cred+" /ctx; true")
	want := ".\n./.gitignore\n./.litterbox.toml\n./Dockerfile\n./README.md\n./src\n./src/app.txt\n"
	if got != want {
		t.Fatalf("the image's context:\n%s\nwant:\n%s", got, want)
	}
	if got := exec(t, r, "b", "cat /ctx/Dockerfile"); strings.Contains(got, ".env") {
		t.Fatalf("the uncommitted Dockerfile was built: %q", got)
	}
}

// bridgeListener starts a throwaway HTTP listener on the default bridge,
// proves an ordinary container on the bridge reaches it, and returns its
// address; it goes when the test ends.
func bridgeListener(t *testing.T) string {
	t.Helper()
	name := testenv.UniqueName("lbbuild-listener")
	if out, err := testenv.Docker("run", "-d", "--rm", "--name", name, "--network", "bridge", "busybox:latest", "httpd", "-f", "-p", "8080", "-h", "/tmp"); err != nil {
		t.Fatalf("starting a listener: %v %s", err, out)
	}
	t.Cleanup(func() { _, _ = testenv.Docker("rm", "-f", name) })
	ip, err := testenv.Docker("inspect", "--format", "{{.NetworkSettings.IPAddress}}", name)
	ip = strings.TrimSpace(ip)
	if err != nil || ip == "" {
		t.Fatalf("the listener's address: %q %v", ip, err)
	}
	if out, err := testenv.Docker("run", "--rm", "--network", "bridge", "busybox:latest", "nc", "-w", "2", ip, "8080"); err != nil {
		t.Fatalf("an ordinary container cannot reach the listener at %s:8080, so the probe proves nothing: %v %s", ip, err, out)
	}
	return ip
}
