package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// weakened loads the work tree's config and runs create's check on it.
func weakened(t *testing.T, m *Manager, network string) ([]string, error) {
	t.Helper()
	cfg, err := config.Load(m.Repo.Root)
	if err != nil {
		t.Fatal(err)
	}
	if network != "" {
		cfg.Network = network
		cfg.From["docker.network"] = hostrepo.FlagNetwork
	}
	return m.Repo.CheckWeakenings(context.Background(), cfg)
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCommittedWeakeningNeedsTrust: what the committed config loosens is
// refused until trust, and again once the file changes; the local file
// needs no trust; "host" comes only from the flag.
func TestCommittedWeakeningNeedsTrust(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := testenv.NewRepo(t, filepath.Join(t.TempDir(), "app"), testenv.Files{
		config.File: "[docker]\nnetwork = \"bridge\"\nuser = \"0:0\"\n",
	})
	m := mustOpen(t, root)

	_, err := weakened(t, m, "")
	var we *hostrepo.WeakeningError
	if !errors.As(err, &we) || err.Error() != `.litterbox.toml sets docker.network = "bridge", which loosens the sandbox, and this repository's committed config is not trusted: read it, then allow it with litterbox trust (or set it in .litterbox.local.toml)` {
		t.Fatalf("untrusted: %v", err)
	}

	res, err := m.Trust()
	if err != nil || !reflect.DeepEqual(res.Weakenings, []string{`docker.network = "bridge"`, `docker.user = "0:0"`}) || !strings.HasPrefix(res.Digest, "sha256:") {
		t.Fatalf("trust: %+v %v", res, err)
	}
	got, err := weakened(t, m, "")
	if err != nil || !reflect.DeepEqual(got, []string{`docker.network = "bridge" (.litterbox.toml, trusted)`, `docker.user = "0:0" (.litterbox.toml, trusted)`}) {
		t.Fatalf("trusted: %q %v", got, err)
	}
	// Another work tree of the repository has its own word.
	wt := filepath.Join(t.TempDir(), "wt")
	testenv.Git(t, root, "worktree", "add", "-q", wt)
	if _, err := weakened(t, mustOpen(t, wt), ""); !errors.As(err, &we) {
		t.Errorf("a linked work tree took the main one's trust: %v", err)
	}

	writeFile(t, filepath.Join(root, config.File), "[docker]\nnetwork = \"bridge\"\nuser = \"0:0\"\nread-only = false\n")
	if _, err := weakened(t, m, ""); !errors.As(err, &we) || !strings.Contains(err.Error(), "has changed since it was trusted") {
		t.Fatalf("changed: %v", err)
	}

	// The same settings from the local file need no trust.
	writeFile(t, filepath.Join(root, config.File), "[docker]\nimage = \"busybox:latest\"\n")
	writeFile(t, filepath.Join(root, config.LocalFile), "[docker]\nnetwork = \"bridge\"\nread-only = false\n[[ports]]\nname = \"www\"\ntarget = 80\n")
	got, err = weakened(t, m, "")
	if err != nil || len(got) != 3 || got[0] != `docker.network = "bridge" (.litterbox.local.toml)` {
		t.Fatalf("local: %q %v", got, err)
	}

	// host: refused from any file, taken from the flag.
	writeFile(t, filepath.Join(root, config.LocalFile), "[docker]\nnetwork = \"host\"\n")
	if _, err := weakened(t, m, ""); !errors.As(err, &we) || !strings.Contains(err.Error(), "litterbox create NAME --network host") {
		t.Fatalf("host from a file: %v", err)
	}
	if got, err := weakened(t, m, "host"); err != nil || !reflect.DeepEqual(got, []string{`docker.network = "host" (--network)`}) {
		t.Fatalf("host from the flag: %q %v", got, err)
	}

	if err := m.Repo.Untrust(); err != nil {
		t.Fatal(err)
	}
	if st, _ := m.Repo.TrustState(); st != hostrepo.Untrusted {
		t.Errorf("after --revoke: %v", st)
	}
}

// TestTrackedLocalFileIsNotTheUsers: a .litterbox.local.toml that git
// tracks came with the repository; what it loosens is refused.
func TestTrackedLocalFileIsNotTheUsers(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := testenv.NewRepo(t, filepath.Join(t.TempDir(), "app"), testenv.Files{
		config.LocalFile: "[docker]\nread-only = false\n",
	})
	_, err := weakened(t, mustOpen(t, root), "")
	if err == nil || !strings.Contains(err.Error(), "git tracks .litterbox.local.toml") {
		t.Fatalf("tracked local file: %v", err)
	}
	testenv.Git(t, root, "rm", "-q", "--cached", config.LocalFile)
	if got, err := weakened(t, mustOpen(t, root), ""); err != nil || len(got) != 1 {
		t.Fatalf("untracked again: %q %v", got, err)
	}
}

// TestCallBoundsNeedTrustToo: every call reads the snapshot bounds and the
// disk guard afresh, with the same rule as create: a committed raise holds
// only once trusted, a local one at once, a lowering always; otherwise the
// bounds of create hold and the note says why.
func TestCallBoundsNeedTrustToo(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	root := testenv.NewRepo(t, filepath.Join(t.TempDir(), "app"), testenv.Files{
		config.File: "[snapshot]\nmax-file-size = \"1g\"\nmax-call-size = \"2g\"\n[docker]\ndisk = \"100g\"\n",
	})
	m := mustOpen(t, root)
	rec := &layout.Record{Limits: layout.Limits{MaxFileSize: 10 << 20}}
	lim, _, note := m.Repo.CallConfig(context.Background(), rec)
	if want := (layout.Limits{MaxFileSize: 10 << 20, MaxCallSize: 500 << 20, Disk: 10 << 30, Output: 32 << 10}); lim != want || !strings.Contains(note, "not trusted") {
		t.Fatalf("untrusted: %+v %q, want %+v and why", lim, note, want)
	}
	if _, err := m.Trust(); err != nil {
		t.Fatal(err)
	}
	if lim, _, note = m.Repo.CallConfig(context.Background(), rec); lim != (layout.Limits{MaxFileSize: 1 << 30, MaxCallSize: 2 << 30, Disk: 100 << 30, Output: 32 << 10}) || note != "" {
		t.Fatalf("trusted: %+v %q", lim, note)
	}
	writeFile(t, filepath.Join(root, config.File), "[snapshot]\nmax-file-size = \"1m\"\n")
	if lim, _, note = m.Repo.CallConfig(context.Background(), rec); lim.MaxFileSize != 1<<20 || note != "" {
		t.Fatalf("a lowering needs no trust: %+v %q", lim, note)
	}
	writeFile(t, filepath.Join(root, config.LocalFile), "[docker]\ndisk = \"20g\"\n")
	if lim, _, note = m.Repo.CallConfig(context.Background(), rec); lim.Disk != 20<<30 || note != "" {
		t.Fatalf("local: %+v %q", lim, note)
	}
	writeFile(t, filepath.Join(root, config.LocalFile), "[docker]\ndisk = \"lots\"\n")
	if lim, _, note = m.Repo.CallConfig(context.Background(), rec); lim.MaxFileSize != 10<<20 || !strings.Contains(note, `size "lots"`) {
		t.Fatalf("broken: %+v %q", lim, note)
	}

	// Secrets the same way: a committed one added after trust is not used,
	// and the ones create allowed hold.
	os.Remove(filepath.Join(root, config.LocalFile))
	writeFile(t, filepath.Join(root, config.File), "[secrets]\nAWS = { env = \"AWS_SECRET_ACCESS_KEY\" }\n")
	rec.Secrets = map[string]config.SecretSpec{"NPM_TOKEN": {Env: "NPM_TOKEN"}}
	if _, specs, note := m.Repo.CallConfig(context.Background(), rec); len(specs) != 1 || specs["NPM_TOKEN"].Env != "NPM_TOKEN" || !strings.Contains(note, "secrets.AWS") {
		t.Fatalf("untrusted secret: %v %q", specs, note)
	}
	writeFile(t, filepath.Join(root, config.LocalFile), "[secrets]\nGH = { command = \"pass show gh\" }\n")
	os.Remove(filepath.Join(root, config.File))
	if _, specs, note := m.Repo.CallConfig(context.Background(), rec); len(specs) != 1 || specs["GH"].Command != "pass show gh" || note != "" {
		t.Fatalf("local secret: %v %q", specs, note)
	}
}

// A committed build is trusted with HEAD's Dockerfile: untrusted before
// litterbox trust, trusted after, changed once a commit rewrites the
// Dockerfile, and trusted again after another litterbox trust; a change to
// the context's other files keeps the trust. A build from the local file
// records none.
func TestBuildTrust(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	ctx := context.Background()
	root := testenv.NewRepo(t, filepath.Join(t.TempDir(), "app"), testenv.Files{
		config.File:  "[docker]\nbuild = \"Dockerfile\"\n",
		"Dockerfile": "FROM busybox:latest\n",
		"app.sh":     "echo v1\n",
	})
	m := mustOpen(t, root)
	check := func() error {
		t.Helper()
		cfg, err := config.Load(root)
		if err != nil {
			t.Fatal(err)
		}
		in, err := m.Images().ReadInputs(ctx, cfg.Build, testenv.Git(t, root, "rev-parse", "HEAD"))
		if err != nil {
			t.Fatal(err)
		}
		return m.Images().CheckBuildTrust(in)
	}
	var bt *image.BuildTrustError
	if err := check(); !errors.As(err, &bt) || bt.Changed || !strings.HasPrefix(err.Error(), "the image build's Dockerfile in commit ") || !strings.HasSuffix(err.Error(), " is not trusted yet: review it (git log -p -- Dockerfile), then allow it with litterbox trust") {
		t.Fatalf("before trust: %v", err)
	}
	res, err := m.Trust()
	if err != nil || !strings.HasPrefix(res.Build, "Dockerfile at commit ") {
		t.Fatalf("trust: %+v %v", res, err)
	}
	if err := check(); err != nil {
		t.Fatalf("after trust: %v", err)
	}
	writeFile(t, filepath.Join(root, "app.sh"), "echo v2\n")
	testenv.Git(t, root, "commit", "-qam", "data")
	if err := check(); err != nil {
		t.Fatalf("after a change to the context's data: %v", err)
	}
	writeFile(t, filepath.Join(root, "Dockerfile"), "FROM busybox:latest\nRUN echo changed\n")
	testenv.Git(t, root, "commit", "-qam", "dockerfile")
	if err := check(); !errors.As(err, &bt) || !bt.Changed || !strings.Contains(err.Error(), "has changed since it was trusted") {
		t.Fatalf("after the Dockerfile changed: %v", err)
	}
	if _, err := m.Trust(); err != nil {
		t.Fatal(err)
	}
	if err := check(); err != nil {
		t.Fatalf("trusted again: %v", err)
	}
	// The user's own build asks for no trust of the Dockerfile.
	testenv.Git(t, root, "rm", "-q", config.File)
	testenv.Git(t, root, "commit", "-qm", "local")
	writeFile(t, filepath.Join(root, config.LocalFile), "[docker]\nbuild = \"Dockerfile\"\n")
	cfg, err := config.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	if in, err := m.headBuild(cfg); in != nil || err != nil {
		t.Fatalf("a local build: %+v %v", in, err)
	}
}
