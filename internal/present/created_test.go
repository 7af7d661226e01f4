package present

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/image"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/ports"
	"github.com/litterbox-dev/litterbox/internal/services"
)

var update = flag.Bool("update", false, "write the renderings to testdata")

// Each reader's rendering of a new sandbox, line for line, as
// testdata/CASE.person.txt and CASE.agent.txt hold it (captured from the
// CLI and the MCP server before the two moved here).
func TestCreated(t *testing.T) {
	for name, c := range createdCases() {
		var person bytes.Buffer
		Created(&person, c)
		for file, got := range map[string]string{name + ".person.txt": person.String(), name + ".agent.txt": CreatedForAgent(c)} {
			if *update {
				if err := os.WriteFile(filepath.Join("testdata", file), []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s:\ngot:\n%s\nwant:\n%s", file, got, want)
			}
		}
	}
}

// createdCases are sandboxes that, together, take every branch of both
// renderings.
func createdCases() map[string]*create.Created {
	exit := 143
	return map[string]*create.Created{
		"defaults": {
			Name: "box", Branch: "litterbox/box", Container: "litterbox-c11e0001-box", Base: "0123456789ab", Status: create.StatusActive,
			Workdir: "/src", Network: "none", Setup: layout.SetupResult{Command: "echo hello world", Stdout: "hello world\n"}, Image: "busybox:latest",
			ImageHint: `this is a Go project (go.mod) and busybox has no go: set image = "golang:1.26" under [docker] in .litterbox.toml`,
			Limits:    create.Limits{CPUs: "1.5", Memory: "2g", Pids: 512, MemoryBudget: 18 << 30, MemoryInUse: 6 << 30, Sandboxes: 3, MaxSandboxes: 8},
		},
		"everything": {
			Name: "web", Branch: "litterbox/web", Container: "litterbox-c11e0001-web", Base: "fedcba987654", Status: create.StatusActive,
			Workdir: "/src/app", Network: "bridge", Allow: []string{"proxy.golang.org", "*.npmjs.org"}, SetupNetwork: "the whole network",
			Isolation: "gvisor", Limits: create.Limits{CPUs: "0.5", Memory: "512m", Pids: 256, Idle: "30m", Sandboxes: 9, MaxSandboxes: 8},
			ConfigFiles: []string{".litterbox.toml", ".litterbox.local.toml"}, Storage: "a claim of the default storage class",
			Weakened: []string{"network = \"bridge\" (.litterbox.local.toml)", "uid = 0 (.litterbox.local.toml)"},
			Notes:    []string{"devcontainer.json features", "devcontainer.json mounts"},
			Image:    "litterbox-build:abc", Build: &image.BuiltImage{Tag: "litterbox-build:abc", Dockerfile: "Dockerfile"},
			Setup:      layout.SetupResult{Command: "npm ci", ExitCode: 0, Stdout: "added 12 packages\nok", Stderr: "warn: old lockfile\n"},
			SetupCache: &create.CacheReport{Key: "3f2a9c0011223344", Saved: true, Files: 1200, Bytes: 48 << 20},
			Ports: []ports.Port{{Name: "web", ContainerPort: 8080, HostPort: 3001, Env: []string{"PORT_WEB", "LITTERBOX_FWD_PORT_WEB"}, Address: "127.0.0.1:3001"},
				{Name: "api", ContainerPort: 9000, HostPort: 3002, Env: []string{"PORT_API"}, Address: "127.0.0.1:3002", EngineHost: "builder"}},
			Services: []services.State{{Name: "db", State: "running", PID: 64}, {Name: "worker", State: "stopped", ExitCode: &exit}},
			Warnings: []string{"uncommitted changes in the work tree are not in the sandbox: a.go", "second warning"},
		},
		"cache-hit-built-cached": {
			Name: "hit", Branch: "litterbox/hit", Container: "litterbox-c11e0001-hit", Base: "111111111111", Status: create.StatusActive,
			Workdir: "/src", Network: "none", ConfigFiles: []string{".litterbox.toml"},
			Image: "litterbox-build:def", Build: &image.BuiltImage{Tag: "litterbox-build:def", Dockerfile: "build/Dockerfile", Cached: true},
			Setup:      layout.SetupResult{Command: "make deps"},
			SetupCache: &create.CacheReport{Key: "aabbccddeeff0011", Hit: true, From: "web", Files: 3, Bytes: 2048},
		},
		"failed-setup": {
			Name: "bad", Branch: "litterbox/bad", Container: "litterbox-c11e0001-bad", Base: "222222222222", Status: create.StatusFailedSetup,
			Workdir: "/src", Network: "none", Setup: layout.SetupResult{Command: "exit 3", ExitCode: 3, Stderr: "boom"}, Image: "busybox:latest",
			SetupCache: &create.CacheReport{Key: "0000000000000000"},
		},
		"failed-devcontainer-setup": {
			Name: "dev", Branch: "litterbox/dev", Container: "litterbox-c11e0001-dev", Base: "444444444444", Status: create.StatusFailedSetup,
			Workdir: "/src", Network: "none", ConfigFiles: []string{".devcontainer/devcontainer.json"}, SetupFrom: ".devcontainer/devcontainer.json",
			Image: "mcr.microsoft.com/devcontainers/python:3", ImageFrom: ".devcontainer/devcontainer.json",
			Setup: layout.SetupResult{Command: "npm install && pip install -r requirements.txt", ExitCode: 127, Stderr: "sh: 1: npm: not found\n"},
		},
		"cache-not-kept": {
			Name: "home", Branch: "litterbox/home", Container: "litterbox-c11e0001-home", Base: "555555555555", Status: create.StatusActive,
			Workdir: "/src", Network: "none", ConfigFiles: []string{".litterbox.toml"}, Setup: layout.SetupResult{Command: "go mod download"},
			Image: "golang:1.26", ImageFrom: ".litterbox.toml",
			SetupCache: &create.CacheReport{Key: "aaaaaaaaaaaa", NotKept: "the setup command left no ignored file in /src"},
		},
		"pooled": {
			Name: "warm", Branch: "litterbox/warm", Container: "litterbox-c11e0001-warm", Base: "666666666666", Status: create.StatusActive,
			Workdir: "/src", Network: "none", Pool: "litterbox-app-c11e0001.pool-0a1b2c3d", Image: "busybox:latest", Setup: layout.SetupResult{Command: "echo hello world", Stdout: "hello world\n"},
		},
		"forked": {
			Name: "copy", Branch: "litterbox/copy", Container: "litterbox-c11e0001-copy", Base: "333333333333", Status: create.StatusActive,
			Workdir: "/src", Network: "bridge", ForkedFrom: "web", Image: "busybox:latest",
			Setup: layout.SetupResult{Command: "npm ci"}, SetupCache: &create.CacheReport{Key: "x", Hit: true},
			Warnings: []string{"one warning"},
		},
	}
}
