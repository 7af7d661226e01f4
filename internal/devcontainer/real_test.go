package devcontainer

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Files from public repositories, as they were at the commit on their
// first line, each parsed as if at .devcontainer/devcontainer.json. The
// expectations were written from reading each file.
var realFiles = map[string]File{
	"python-cpython.json": {
		Image: "ghcr.io/python/devcontainer:2024.09.25.11038928730",
		// onCreate (array), updateContent (object: docs, python),
		// postCreate (object: "umask fix: /tmp" sorts before "... workspace").
		Setup: `'dnf' 'install' '-y' 'which' 'zsh' 'fish' '/usr/bin/setfacl'` +
			` && 'make' '--directory' 'Doc' 'venv' 'html'` +
			` && sh -c './configure --config-cache --with-pydebug && make -s -j ` + "`nproc`" + `'` +
			` && 'sudo' 'setfacl' '-bnR' '/tmp'` +
			` && 'sudo' 'setfacl' '-bnR' '.'`,
	},
	"microsoft-vscode.json": {
		Build: &Build{
			Dockerfile: ".devcontainer/Dockerfile",
			Context:    ".devcontainer",
			Args: map[string]string{
				"MAX_VNC_RESOLUTION":    "1920x1080x16",
				"TARGET_VNC_RESOLUTION": "1280x768",
				"TARGET_VNC_PORT":       "5901",
				"TARGET_NOVNC_PORT":     "6080",
				"VNC_PASSWORD":          "vscode",
				"INSTALL_FIREFOX":       "true",
			},
		},
		Ports: []Port{{"port-6080", 6080}, {"port-5901", 5901}},
		User:  "node",
		Ignored: []string{
			"overrideCommand: not supported",
			"runArgs: not supported",
		},
	},
	"kubernetes-kubernetes.json": {
		Image: "mcr.microsoft.com/devcontainers/base:bullseye",
		Setup: "bash .devcontainer/setup.sh",
		User:  "root",
		Ignored: []string{
			"features (./local-features/etcd): not supported",
			"features (./local-features/kubectl-kind): not supported",
			"features (./local-features/kubetest2): not supported",
			"features (ghcr.io/devcontainers/features/docker-in-docker:2): not supported",
			"features (ghcr.io/devcontainers/features/github-cli:1): not supported",
			"features (ghcr.io/devcontainers/features/go:1): not supported",
			"features (ghcr.io/devcontainers/features/kubectl-helm-minikube:1): not supported",
			"features (ghcr.io/devcontainers/features/python:1): not supported",
			"features (ghcr.io/devcontainers/features/sshd:1): not supported",
			"hostRequirements: not supported",
			"otherPortsAttributes: not supported",
		},
	},
	"github-docs.json": {
		Build: &Build{Dockerfile: ".devcontainer/Dockerfile", Context: ".devcontainer", Args: map[string]string{"VARIANT": "18"}},
		Setup: "npm ci",
		Ports: []Port{{"preview", 4000}},
		User:  "node",
		Ignored: []string{
			"features (sshd): not supported",
			"hostRequirements: not supported",
		},
	},
	"microsoft-vscode-remote-try-python.json": {
		// "context": ".." is the repository root; port 9000 has attributes
		// but is not forwarded (that line is commented out).
		Build: &Build{
			Dockerfile: ".devcontainer/Dockerfile",
			Context:    ".",
			Args:       map[string]string{"VARIANT": "3.9-bullseye", "NODE_VERSION": "lts/*"},
		},
		Setup: "pip3 install -r requirements.txt",
		User:  "vscode",
	},
	"anthropics-claude-code.json": {
		Build: &Build{
			Dockerfile: ".devcontainer/Dockerfile",
			Context:    ".devcontainer",
			Args:       map[string]string{"GIT_DELTA_VERSION": "0.18.2", "ZSH_IN_DOCKER_VERSION": "1.2.0"},
		},
		Env: map[string]string{
			"NODE_OPTIONS":                   "--max-old-space-size=4096",
			"CLAUDE_CONFIG_DIR":              "/home/node/.claude",
			"POWERLEVEL9K_DISABLE_GITSTATUS": "true",
		},
		User: "node",
		Ignored: []string{
			"build.args.TZ: ${localEnv:TZ:America/Los_Angeles} is not read (host variables never reach a sandbox from a repository file)",
			"mounts: not supported",
			"postStartCommand: " + notRun,
			"runArgs: not supported",
			"workspaceFolder: not supported (Litterbox always uses /src)",
			"workspaceMount: not supported (Litterbox always mounts the repository at /src)",
		},
	},
	"devcontainers-cli.json": {
		Build: &Build{Dockerfile: ".devcontainer/Dockerfile", Context: ".devcontainer", Args: map[string]string{"VARIANT": "18-bookworm"}},
		Setup: "yarn install",
		User:  "node",
		Ignored: []string{
			"features (ghcr.io/devcontainers/features/docker-in-docker:2): not supported",
			"mounts: not supported",
		},
	},
	"microsoft-vscode-remote-try-go.json": {
		// The legacy top-level "dockerFile"; "extensions" and "settings"
		// are VS Code's and not named.
		Build: &Build{Dockerfile: ".devcontainer/Dockerfile", Context: ".devcontainer"},
		Ignored: []string{
			"appPort: not supported",
			"runArgs: not supported",
		},
	},
	"devcontainers-images.json": {
		Image: "mcr.microsoft.com/devcontainers/javascript-node:0-18",
		Setup: "npm install -g @devcontainers/cli",
		Ignored: []string{
			"features (ghcr.io/devcontainers/features/azure-cli:1): not supported",
			"features (ghcr.io/devcontainers/features/docker-in-docker:2): not supported",
		},
	},
}

var sourceLine = regexp.MustCompile(`^// Source: https://github\.com/([^/]+)/([^/]+)/blob/[0-9a-f]{40}/\.devcontainer/devcontainer\.json\n`)

func TestRealFiles(t *testing.T) {
	names, err := filepath.Glob("testdata/real/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != len(realFiles) {
		t.Errorf("%d files in testdata/real, %d expectations", len(names), len(realFiles))
	}
	for _, path := range names {
		base := filepath.Base(path)
		t.Run(base, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m := sourceLine.FindSubmatch(data)
			if m == nil || string(m[1])+"-"+string(m[2])+".json" != base {
				t.Errorf("first line does not name the source as owner-repo: %q", strings.SplitN(string(data), "\n", 2)[0])
			}
			want, ok := realFiles[base]
			if !ok {
				t.Fatal("no expectation")
			}
			f, err := Parse(dcName, data)
			if err != nil {
				t.Fatal(err)
			}
			checkFile(t, f, want)
		})
	}
}

// FuzzParse checks what a repository's file can do to Parse: no panic, and
// every error and Ignored line one line, as the caller prints them so.
func FuzzParse(f *testing.F) {
	names, _ := filepath.Glob("testdata/real/*.json")
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"forwardPorts": ["a:1", 2], "portsAttributes": {"2": {"label": "x"}}, "remoteEnv": {"A": "${containerEnv:B:c}"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(dcName, data)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\r\n") {
				t.Errorf("error not one line: %q", err)
			}
			return
		}
		for _, s := range file.Ignored {
			if strings.ContainsAny(s, "\r\n") {
				t.Errorf("Ignored line not one line: %q", s)
			}
		}
		file.ExpandContainerEnv(map[string]string{"B": "b"})
	})
}
