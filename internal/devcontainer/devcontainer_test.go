package devcontainer

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

const dcName = ".devcontainer/devcontainer.json"

// exported is f without what only ExpandContainerEnv reads, so tests can
// compare it with a File written out by hand.
func exported(f *File) File {
	return File{
		Name: f.Name, Image: f.Image, Build: f.Build, Env: f.Env, Setup: f.Setup,
		Ports: f.Ports, User: f.User, Ignored: f.Ignored,
	}
}

func checkFile(t *testing.T, got *File, want File) {
	t.Helper()
	g := exported(got)
	if want.Name == "" {
		want.Name = g.Name
	}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("got\n%s\nwant\n%s", show(g), show(want))
	}
}

func show(f File) string {
	var b strings.Builder
	b.WriteString("  Image: " + f.Image + "\n")
	if f.Build != nil {
		fmt.Fprintf(&b, "  Build: %s | %s | %s | %s\n", f.Build.Dockerfile, f.Build.Context, f.Build.Target, mapString(f.Build.Args))
	}
	b.WriteString("  Env: " + mapString(f.Env) + "\n")
	b.WriteString("  Setup: " + f.Setup + "\n")
	for _, p := range f.Ports {
		fmt.Fprintf(&b, "  Port: %s %d\n", p.Name, p.Target)
	}
	b.WriteString("  User: " + f.User + "\n")
	for _, i := range f.Ignored {
		b.WriteString("  Ignored: " + i + "\n")
	}
	return b.String()
}

func mapString(m map[string]string) string {
	if m == nil {
		return "nil"
	}
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

type parseCase struct {
	name string
	file string // defaults to dcName
	json string
	want File
	err  string // the whole error, when Parse must fail
}

func runParse(t *testing.T, cases []parseCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := c.file
			if name == "" {
				name = dcName
			}
			f, err := Parse(name, []byte(c.json))
			if c.err != "" {
				if err == nil {
					t.Fatalf("no error; want %q", c.err)
				}
				if err.Error() != c.err {
					t.Fatalf("error\n got %q\nwant %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkFile(t, f, c.want)
		})
	}
}

func TestParseImage(t *testing.T) {
	runParse(t, []parseCase{
		{name: "image", json: `{"image": "golang:1.25"}`, want: File{Image: "golang:1.25"}},
		{name: "empty", json: `{}`, want: File{}},
		{
			name: "comments and trailing commas",
			json: "// a comment\n{\n  /* block */ \"image\": \"golang:1.25\", // trailing\n}\n",
			want: File{Image: "golang:1.25"},
		},
		{name: "byte order mark", json: "\ufeff{\"image\": \"x\"}", want: File{Image: "x"}},
		{
			name: "compose",
			json: `{"dockerComposeFile": "docker-compose.yml", "service": "app"}`,
			err:  ".devcontainer/devcontainer.json: docker compose dev containers are not supported; set [docker] image or build in .litterbox.toml",
		},
		{
			name: "compose in a list",
			json: `{"dockerComposeFile": ["a.yml", "b.yml"], "image": "x"}`,
			err:  ".devcontainer/devcontainer.json: docker compose dev containers are not supported; set [docker] image or build in .litterbox.toml",
		},
	})
}

func TestParseBuild(t *testing.T) {
	runParse(t, []parseCase{
		{
			name: "dockerfile, context, args, target",
			json: `{"build": {"dockerfile": "Dockerfile", "context": "..", "args": {"GO": "1.25", "DIR": "${containerWorkspaceFolder}"}, "target": "dev"}}`,
			want: File{Build: &Build{Dockerfile: ".devcontainer/Dockerfile", Context: ".", Args: map[string]string{"GO": "1.25", "DIR": "/src"}, Target: "dev"}},
		},
		{
			name: "context defaults to the file's directory",
			json: `{"build": {"dockerfile": "docker/Dockerfile"}}`,
			want: File{Build: &Build{Dockerfile: ".devcontainer/docker/Dockerfile", Context: ".devcontainer"}},
		},
		{
			name: "file at the root",
			file: ".devcontainer.json",
			json: `{"build": {"dockerfile": "./build/../Dockerfile.dev", "context": "build/"}}`,
			want: File{Build: &Build{Dockerfile: "Dockerfile.dev", Context: "build"}},
		},
		{
			name: "one level up is the root",
			json: `{"build": {"dockerfile": "../Dockerfile", "context": "../"}}`,
			want: File{Build: &Build{Dockerfile: "Dockerfile", Context: "."}},
		},
		{
			name: "localWorkspaceFolder is the root",
			json: `{"build": {"dockerfile": "${localWorkspaceFolder}/docker/Dockerfile", "context": "${localWorkspaceFolder}"}}`,
			want: File{Build: &Build{Dockerfile: "docker/Dockerfile", Context: "."}},
		},
		{
			name: "legacy dockerFile and context",
			json: `{"dockerFile": "Dockerfile", "context": "..", "build": {"args": {"V": "1"}}}`,
			want: File{Build: &Build{Dockerfile: ".devcontainer/Dockerfile", Context: ".", Args: map[string]string{"V": "1"}}},
		},
		{
			name: "build.dockerfile beats dockerFile",
			json: `{"dockerFile": "Old", "build": {"dockerfile": "New"}}`,
			want: File{
				Build:   &Build{Dockerfile: ".devcontainer/New", Context: ".devcontainer"},
				Ignored: []string{"dockerFile: not used (build.dockerfile is set)"},
			},
		},
		{
			name: "build beats image",
			json: `{"image": "golang", "build": {"dockerfile": "Dockerfile"}}`,
			want: File{
				Build:   &Build{Dockerfile: ".devcontainer/Dockerfile", Context: ".devcontainer"},
				Ignored: []string{"image: not used (build takes precedence)"},
			},
		},
		{
			name: "options, cacheFrom and unknown build keys",
			json: `{"build": {"dockerfile": "D", "options": ["--network=host"], "cacheFrom": "x", "platform": "arm64"}}`,
			want: File{
				Build: &Build{Dockerfile: ".devcontainer/D", Context: ".devcontainer"},
				Ignored: []string{
					"build.cacheFrom: not supported",
					"build.options: not supported",
					"build.platform: unknown key, not supported",
				},
			},
		},
		{
			name: "context without a dockerfile",
			json: `{"image": "x", "context": ".."}`,
			want: File{Image: "x", Ignored: []string{"context: not used (no dockerfile)"}},
		},
		{name: "empty build", json: `{"image": "x", "build": {}}`, want: File{Image: "x"}},
		{
			name: "build args referring to the host are dropped",
			json: `{"build": {"dockerfile": "D", "args": {"TZ": "${localEnv:TZ:UTC}", "HOME": "${localEnv:HOME}", "V": "1"}}}`,
			want: File{
				Build: &Build{Dockerfile: ".devcontainer/D", Context: ".devcontainer", Args: map[string]string{"V": "1"}},
				Ignored: []string{
					"build.args.HOME: ${localEnv:HOME} is not read (host variables never reach a sandbox from a repository file)",
					"build.args.TZ: ${localEnv:TZ:UTC} is not read (host variables never reach a sandbox from a repository file)",
				},
			},
		},
		{
			name: "build args cannot see the container",
			json: `{"build": {"dockerfile": "D", "args": {"P": "${containerEnv:PATH}"}}}`,
			want: File{
				Build:   &Build{Dockerfile: ".devcontainer/D", Context: ".devcontainer", Args: map[string]string{"P": "${containerEnv:PATH}"}},
				Ignored: []string{"build.args.P: ${containerEnv:PATH} is not expanded (the image is not built yet)"},
			},
		},
		{
			name: "no dockerfile",
			json: `{"build": {"context": ".."}}`,
			err:  ".devcontainer/devcontainer.json: build.dockerfile: missing",
		},
		{
			name: "dockerfile escapes",
			json: `{"build": {"dockerfile": "../../Dockerfile"}}`,
			err:  `.devcontainer/devcontainer.json: build.dockerfile: "../../Dockerfile" is outside the repository`,
		},
		{
			name: "context escapes",
			json: `{"build": {"dockerfile": "Dockerfile", "context": "../.."}}`,
			err:  `.devcontainer/devcontainer.json: build.context: "../.." is outside the repository`,
		},
		{
			name: "root file's context escapes",
			file: ".devcontainer.json",
			json: `{"build": {"dockerfile": "Dockerfile", "context": ".."}}`,
			err:  `.devcontainer.json: build.context: ".." is outside the repository`,
		},
		{
			name: "escape through the middle",
			json: `{"build": {"dockerfile": "a/../../../etc/Dockerfile"}}`,
			err:  `.devcontainer/devcontainer.json: build.dockerfile: "a/../../../etc/Dockerfile" is outside the repository`,
		},
		{
			name: "absolute dockerfile",
			json: `{"build": {"dockerfile": "/etc/Dockerfile"}}`,
			err:  `.devcontainer/devcontainer.json: build.dockerfile: "/etc/Dockerfile" is an absolute path; want one inside the repository`,
		},
		{
			name: "absolute legacy context",
			json: `{"dockerFile": "Dockerfile", "context": "/"}`,
			err:  `.devcontainer/devcontainer.json: build.context: "/" is an absolute path; want one inside the repository`,
		},
		{
			name: "localWorkspaceFolder does not let a path escape",
			json: `{"build": {"dockerfile": "${localWorkspaceFolder}/../Dockerfile"}}`,
			err:  `.devcontainer/devcontainer.json: build.dockerfile: "../../Dockerfile" is outside the repository`,
		},
	})
}

func TestParseEnv(t *testing.T) {
	runParse(t, []parseCase{
		{
			name: "merged, remoteEnv wins",
			json: `{"containerEnv": {"A": "a", "B": "b"}, "remoteEnv": {"B": "remote", "C": "c"}}`,
			want: File{Env: map[string]string{"A": "a", "B": "remote", "C": "c"}},
		},
		{
			name: "remoteEnv null unsets",
			json: `{"containerEnv": {"A": "a", "B": "b"}, "remoteEnv": {"B": null, "X": null}}`,
			want: File{Env: map[string]string{"A": "a"}},
		},
		{
			name: "workspace variables",
			json: `{"containerEnv": {
				"W": "${containerWorkspaceFolder}/bin",
				"B": "${containerWorkspaceFolderBasename}",
				"L": "x-${localWorkspaceFolderBasename}-y",
				"U": "${workspaceFolder} ${HOME} ${unknown:arg}"}}`,
			want: File{Env: map[string]string{"W": "/src/bin", "B": "src", "L": "x--y", "U": "${workspaceFolder} ${HOME} ${unknown:arg}"}},
		},
		{
			name: "containerEnv is left for the caller",
			json: `{"remoteEnv": {"PATH": "${containerEnv:PATH}:${containerWorkspaceFolder}/bin", "G": "${containerEnv:GOPATH:/go}"}}`,
			want: File{Env: map[string]string{"PATH": "${containerEnv:PATH}:/src/bin", "G": "${containerEnv:GOPATH:/go}"}},
		},
		{
			name: "host variables are never read",
			json: `{"containerEnv": {"GOPATH": "${localEnv:HOME}/go", "K": "v"},
				"remoteEnv": {"T": "${env:TOKEN}", "W": "${localWorkspaceFolder}/x", "D": "${localEnv:X:default}"}}`,
			want: File{
				Env: map[string]string{"K": "v"},
				Ignored: []string{
					"containerEnv.GOPATH: ${localEnv:HOME} is not read (host variables never reach a sandbox from a repository file)",
					"remoteEnv.D: ${localEnv:X:default} is not read (host variables never reach a sandbox from a repository file)",
					"remoteEnv.T: ${env:TOKEN} is not read (host variables never reach a sandbox from a repository file)",
					"remoteEnv.W: ${localWorkspaceFolder} is not read (host paths never reach a sandbox from a repository file)",
				},
			},
		},
		{
			name: "a dropped remoteEnv value leaves containerEnv's",
			json: `{"containerEnv": {"TZ": "UTC"}, "remoteEnv": {"TZ": "${localEnv:TZ}"}}`,
			want: File{
				Env:     map[string]string{"TZ": "UTC"},
				Ignored: []string{"remoteEnv.TZ: ${localEnv:TZ} is not read (host variables never reach a sandbox from a repository file)"},
			},
		},
		{
			name: "devcontainerId",
			json: `{"containerEnv": {"ID": "${devcontainerId}"}}`,
			want: File{
				Env:     map[string]string{"ID": "${devcontainerId}"},
				Ignored: []string{"containerEnv.ID: ${devcontainerId} is not substituted"},
			},
		},
		{
			name: "odd names are quoted in messages",
			json: `{"containerEnv": {"my var": "${localEnv:X}"}}`,
			want: File{Ignored: []string{`containerEnv["my var"]: ${localEnv:X} is not read (host variables never reach a sandbox from a repository file)`}},
		},
		{
			name: "containerEnv without a name",
			json: `{"remoteEnv": {"P": "${containerEnv}"}}`,
			err:  ".devcontainer/devcontainer.json: remoteEnv.P: ${containerEnv} names no variable",
		},
		{
			name: "containerEnv value not a string",
			json: `{"containerEnv": {"GOPATH": 1}}`,
			err:  ".devcontainer/devcontainer.json: containerEnv.GOPATH: want a string, got 1",
		},
		{
			name: "containerEnv value null",
			json: `{"containerEnv": {"GOPATH": null}}`,
			err:  ".devcontainer/devcontainer.json: containerEnv.GOPATH: want a string, got null",
		},
		{
			name: "remoteEnv value not a string",
			json: `{"remoteEnv": {"DEBUG": true}}`,
			err:  ".devcontainer/devcontainer.json: remoteEnv.DEBUG: want a string or null, got true",
		},
		{
			name: "containerEnv not an object",
			json: `{"containerEnv": ["A=b"]}`,
			err:  ".devcontainer/devcontainer.json: containerEnv: want an object, got an array",
		},
	})
}

func TestParseSetup(t *testing.T) {
	hostNote := " is not read (host variables never reach a sandbox from a repository file)"
	runParse(t, []parseCase{
		{
			name: "string form is a shell line",
			json: `{"postCreateCommand": "npm ci && echo \"done\" > /tmp/x"}`,
			want: File{Setup: `npm ci && echo "done" > /tmp/x`},
		},
		{
			name: "array form is an argv",
			json: `{"postCreateCommand": ["echo", "it's $HOME", "a b", ""]}`,
			want: File{Setup: `'echo' 'it'\''s $HOME' 'a b' ''`},
		},
		{
			name: "object form in key order",
			json: `{"postCreateCommand": {"b": "make b", "a": ["make", "a"], "c": ""}}`,
			want: File{Setup: `'make' 'a' && sh -c 'make b'`},
		},
		{
			name: "the three commands in order, each shell line in a shell of its own",
			json: `{
				"postCreateCommand": "cd web && npm ci # deps",
				"updateContentCommand": ["go", "mod", "download"],
				"onCreateCommand": {"z": "echo z", "y": ["echo", "y"]},
				"postStartCommand": "make serve"
			}`,
			want: File{
				Setup:   `'echo' 'y' && sh -c 'echo z' && 'go' 'mod' 'download' && sh -c 'cd web && npm ci # deps'`,
				Ignored: []string{"postStartCommand: " + notRun},
			},
		},
		{
			name: "empty commands",
			json: `{"onCreateCommand": "", "updateContentCommand": [], "postCreateCommand": {}}`,
			want: File{},
		},
		{
			name: "null command",
			json: `{"postCreateCommand": null}`,
			want: File{},
		},
		{
			name: "substitutions",
			json: `{
				"onCreateCommand": "cd ${containerWorkspaceFolder} && echo ${localWorkspaceFolderBasename}",
				"postCreateCommand": ["ls", "${containerWorkspaceFolder}/${containerWorkspaceFolderBasename}"]
			}`,
			want: File{Setup: `sh -c 'cd /src && echo ' && 'ls' '/src/src'`},
		},
		{
			name: "host references become empty",
			json: `{
				"postCreateCommand": {"a": "git config user.email ${localEnv:EMAIL}", "b": ["cp", "${localWorkspaceFolder}/x", "."]}
			}`,
			want: File{
				Setup: `sh -c 'git config user.email ' && 'cp' '/x' '.'`,
				Ignored: []string{
					"postCreateCommand.a: ${localEnv:EMAIL}" + hostNote,
					"postCreateCommand.b[1]: ${localWorkspaceFolder} is not read (host paths never reach a sandbox from a repository file)",
				},
			},
		},
		{
			name: "containerEnv is left for the caller",
			json: `{"postCreateCommand": ["echo", "${containerEnv:HOME}"]}`,
			want: File{Setup: `'echo' '${containerEnv:HOME}'`},
		},
		{
			name: "a number",
			json: `{"postCreateCommand": 3}`,
			err:  ".devcontainer/devcontainer.json: postCreateCommand: want a string, an array of strings or an object, got 3",
		},
		{
			name: "an array element",
			json: `{"onCreateCommand": ["echo", false]}`,
			err:  ".devcontainer/devcontainer.json: onCreateCommand[1]: want a string, got false",
		},
		{
			name: "an object value",
			json: `{"updateContentCommand": {"deps": {"cmd": "x"}}}`,
			err:  ".devcontainer/devcontainer.json: updateContentCommand.deps: want a string or an array of strings, got an object",
		},
		{
			name: "an object value null",
			json: `{"updateContentCommand": {"my step": null}}`,
			err:  `.devcontainer/devcontainer.json: updateContentCommand["my step"]: want a string or an array of strings, got null`,
		},
		{
			name: "an element of an array in an object",
			json: `{"postCreateCommand": {"a": ["x", 1]}}`,
			err:  ".devcontainer/devcontainer.json: postCreateCommand.a[1]: want a string, got 1",
		},
	})
}

func TestParsePorts(t *testing.T) {
	runParse(t, []parseCase{
		{
			name: "numbers and strings",
			json: `{"forwardPorts": [3000, "8080", "localhost:9000", "127.0.0.1:9001"]}`,
			want: File{Ports: []Port{{"port-3000", 3000}, {"port-8080", 8080}, {"port-9000", 9000}, {"port-9001", 9001}}},
		},
		{
			name: "named from labels",
			json: `{
				"forwardPorts": [3000, 5432, 6006],
				"portsAttributes": {
					"3000": {"label": "Web App", "onAutoForward": "openBrowser"},
					"5432": {"onAutoForward": "silent"},
					"6006": {"label": "!!!"},
					"8000-9000": {"label": "range"}
				}
			}`,
			want: File{Ports: []Port{{"web-app", 3000}, {"port-5432", 5432}, {"port-6006", 6006}}},
		},
		{
			name: "names are unique",
			json: `{
				"forwardPorts": [1, 2, 3, 4],
				"portsAttributes": {"1": {"label": "App"}, "2": {"label": "app"}, "3": {"label": "APP!"}, "4": {"label": "port 1"}}
			}`,
			want: File{Ports: []Port{{"app", 1}, {"app-2", 2}, {"app-3", 3}, {"port-1", 4}}},
		},
		{
			name: "generated name clashing with a label",
			json: `{"forwardPorts": [5000, 3000], "portsAttributes": {"5000": {"label": "Port 3000"}}}`,
			want: File{Ports: []Port{{"port-3000", 5000}, {"port-3000-2", 3000}}},
		},
		{
			name: "duplicates kept once",
			json: `{"forwardPorts": [3000, "3000", "localhost:3000", 3001]}`,
			want: File{Ports: []Port{{"port-3000", 3000}, {"port-3001", 3001}}},
		},
		{
			name: "other hosts",
			json: `{"forwardPorts": ["db:5432", 80, "redis-cache:6379"]}`,
			want: File{
				Ports: []Port{{"port-80", 80}},
				Ignored: []string{
					`forwardPorts "db:5432": only ports of this container are published`,
					`forwardPorts "redis-cache:6379": only ports of this container are published`,
				},
			},
		},
		{
			name: "labels without forwardPorts",
			json: `{"portsAttributes": {"3000": {"label": "App"}}}`,
			want: File{},
		},
		{
			name: "boolean",
			json: `{"forwardPorts": [3000, true]}`,
			err:  `.devcontainer/devcontainer.json: forwardPorts[1]: want a port number or "host:port", got true`,
		},
		{
			name: "zero",
			json: `{"forwardPorts": [0]}`,
			err:  ".devcontainer/devcontainer.json: forwardPorts[0]: port 0 is out of range (1-65535)",
		},
		{
			name: "too big",
			json: `{"forwardPorts": [65536]}`,
			err:  ".devcontainer/devcontainer.json: forwardPorts[0]: port 65536 is out of range (1-65535)",
		},
		{
			name: "negative",
			json: `{"forwardPorts": [-1]}`,
			err:  ".devcontainer/devcontainer.json: forwardPorts[0]: port -1 is out of range (1-65535)",
		},
		{
			name: "huge string",
			json: `{"forwardPorts": ["99999999999999999999999"]}`,
			err:  ".devcontainer/devcontainer.json: forwardPorts[0]: port 99999999999999999999999 is out of range (1-65535)",
		},
		{
			name: "other host out of range",
			json: `{"forwardPorts": ["db:70000"]}`,
			err:  ".devcontainer/devcontainer.json: forwardPorts[0]: port 70000 is out of range (1-65535)",
		},
		{
			name: "fraction",
			json: `{"forwardPorts": [80.5]}`,
			err:  `.devcontainer/devcontainer.json: forwardPorts[0]: want a port number or "host:port", got 80.5`,
		},
		{
			name: "not a number",
			json: `{"forwardPorts": ["http"]}`,
			err:  `.devcontainer/devcontainer.json: forwardPorts[0]: want a port number or "host:port", got "http"`,
		},
		{
			name: "host without port",
			json: `{"forwardPorts": ["db:"]}`,
			err:  `.devcontainer/devcontainer.json: forwardPorts[0]: want a port number or "host:port", got "db:"`,
		},
		{
			name: "not an array",
			json: `{"forwardPorts": 3000}`,
			err:  ".devcontainer/devcontainer.json: forwardPorts: want an array, got 3000",
		},
		{
			name: "attributes not an object",
			json: `{"forwardPorts": [3000], "portsAttributes": {"3000": "App"}}`,
			err:  `.devcontainer/devcontainer.json: portsAttributes["3000"]: want an object, got "App"`,
		},
		{
			name: "label not a string",
			json: `{"forwardPorts": [3000], "portsAttributes": {"3000": {"label": 1}}}`,
			err:  `.devcontainer/devcontainer.json: portsAttributes["3000"].label: want a string, got 1`,
		},
	})
}

func TestParseUser(t *testing.T) {
	runParse(t, []parseCase{
		{name: "remoteUser", json: `{"remoteUser": "vscode"}`, want: File{User: "vscode"}},
		{name: "containerUser", json: `{"containerUser": "1000:1000"}`, want: File{User: "1000:1000"}},
		{name: "remoteUser wins", json: `{"containerUser": "root", "remoteUser": "node"}`, want: File{User: "node"}},
		{
			name: "not a string",
			json: `{"remoteUser": 1000}`,
			err:  ".devcontainer/devcontainer.json: remoteUser: want a string, got 1000",
		},
	})
}

func TestParseIgnored(t *testing.T) {
	runParse(t, []parseCase{
		{
			name: "every key Litterbox does not honour",
			json: `{
				"image": "x",
				"features": {"ghcr.io/devcontainers/features/go:1": {}, "ghcr.io/devcontainers/features/node:1": {"version": "20"}},
				"mounts": ["source=a,target=/a,type=volume"],
				"runArgs": ["--network=host"],
				"privileged": true,
				"capAdd": ["SYS_PTRACE"],
				"securityOpt": ["seccomp=unconfined"],
				"init": true,
				"overrideCommand": false,
				"shutdownAction": "none",
				"workspaceFolder": "/workspace",
				"workspaceMount": "source=${localWorkspaceFolder},target=/workspace,type=bind",
				"postStartCommand": "make serve",
				"postAttachCommand": ["echo", "hi"],
				"initializeCommand": "rm -rf ~",
				"appPort": [3000],
				"hostRequirements": {"cpus": 4},
				"otherPortsAttributes": {"onAutoForward": "silent"},
				"updateRemoteUserUID": false,
				"userEnvProbe": "loginInteractiveShell",
				"service": "app",
				"somethingNew": 1
			}`,
			want: File{Image: "x", Ignored: []string{
				"appPort: not supported",
				"capAdd: not supported",
				"features (ghcr.io/devcontainers/features/go:1): not supported",
				"features (ghcr.io/devcontainers/features/node:1): not supported",
				"hostRequirements: not supported",
				"init: not supported",
				"initializeCommand: never run (it would run on the host)",
				"mounts: not supported",
				"otherPortsAttributes: not supported",
				"overrideCommand: not supported",
				"postAttachCommand: " + notRun,
				"postStartCommand: " + notRun,
				"privileged: not supported",
				"runArgs: not supported",
				"securityOpt: not supported",
				"service: unknown key, not supported",
				"shutdownAction: not supported",
				"somethingNew: unknown key, not supported",
				"updateRemoteUserUID: not supported",
				"userEnvProbe: not supported",
				"workspaceFolder: not supported (Litterbox always uses /src)",
				"workspaceMount: not supported (Litterbox always mounts the repository at /src)",
			}},
		},
		{
			name: "values that ask for nothing",
			json: `{
				"features": {}, "mounts": [], "runArgs": [], "privileged": false, "init": false,
				"overrideCommand": true, "updateRemoteUserUID": true, "postStartCommand": "", "capAdd": null
			}`,
			want: File{},
		},
		{
			name: "keys that only steer editors",
			json: `{
				"$schema": "https://example.com/schema.json", "name": "dev", "waitFor": "postCreateCommand",
				"customizations": {"vscode": {"extensions": ["golang.go"]}},
				"extensions": ["golang.go"], "settings": {"go.gopath": "/go"}, "devPort": 8000
			}`,
			want: File{},
		},
		{
			name: "features in an old form",
			json: `{"features": ["go"]}`,
			want: File{Ignored: []string{"features: not supported"}},
		},
	})
}

func TestParseErrors(t *testing.T) {
	runParse(t, []parseCase{
		{
			name: "invalid JSONC gives the line",
			json: "{\n  \"image\": \"x\",\n  // fine\n  \"build\": {\n    \"dockerfile\": \"D\"\n    \"context\": \"..\"\n  }\n}\n",
			err:  `.devcontainer/devcontainer.json: line 6: invalid JSON: invalid character '"' after object value (expecting ',' or '}')`,
		},
		{
			name: "unterminated",
			json: "{\n  \"image\": \"x\",\n",
			err:  ".devcontainer/devcontainer.json: line 3: invalid JSON: parsing value: unexpected EOF",
		},
		{
			name: "unterminated comment",
			json: "{\"image\": \"x\"}\n/* no end",
			err:  ".devcontainer/devcontainer.json: line 2: invalid JSON: parsing comment: unexpected EOF",
		},
		{
			name: "not an object",
			json: `["image"]`,
			err:  ".devcontainer/devcontainer.json: want a JSON object, got an array",
		},
		{
			name: "empty",
			json: ``,
			err:  ".devcontainer/devcontainer.json: line 1: invalid JSON: parsing value: unexpected EOF",
		},
		{
			name: "image not a string",
			json: `{"image": {"name": "x"}}`,
			err:  ".devcontainer/devcontainer.json: image: want a string, got an object",
		},
		{
			name: "build not an object",
			json: `{"build": "Dockerfile"}`,
			err:  `.devcontainer/devcontainer.json: build: want an object, got "Dockerfile"`,
		},
		{
			name: "build.dockerfile not a string",
			json: `{"build": {"dockerfile": ["Dockerfile"]}}`,
			err:  ".devcontainer/devcontainer.json: build.dockerfile: want a string, got an array",
		},
		{
			name: "build.args not an object",
			json: `{"build": {"dockerfile": "D", "args": ["A=1"]}}`,
			err:  ".devcontainer/devcontainer.json: build.args: want an object, got an array",
		},
		{
			name: "build arg not a string",
			json: `{"build": {"dockerfile": "D", "args": {"N": 3}}}`,
			err:  ".devcontainer/devcontainer.json: build.args.N: want a string, got 3",
		},
		{
			name: "long strings are cut in errors",
			json: `{"build": "` + strings.Repeat("x", 100) + `"}`,
			err:  `.devcontainer/devcontainer.json: build: want an object, got "` + strings.Repeat("x", 40) + `..."`,
		},
	})
}

func TestParseKeepsCallersBytes(t *testing.T) {
	data := []byte("{\n  // comment\n  \"image\": \"x\",\n}\n")
	orig := string(data)
	if _, err := Parse(dcName, data); err != nil {
		t.Fatal(err)
	}
	if string(data) != orig {
		t.Errorf("Parse changed its input to %q", data)
	}
}

func TestErrorsAreOneLine(t *testing.T) {
	_, err := Parse(dcName, []byte(`{"forwardPorts": ["a`+"\n"+`b"]}`))
	if err == nil {
		t.Fatal("no error")
	}
	if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), dcName+": ") {
		t.Errorf("error %q: want one line starting with the file name", err)
	}
}
