package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// invocation is one run of the CLI in a unit test.
type invocation struct {
	code           int
	stdout, stderr string
}

// invoke runs litterbox with args on p (a fresh program when nil) with buffers
// for streams, as a user would in repo; no engine answers (DOCKER_HOST
// points nowhere).
func invoke(t *testing.T, p *cli.Program, args ...string) invocation {
	t.Helper()
	var out, errb bytes.Buffer
	if p == nil {
		p = cli.NewProgram(strings.NewReader(""), nil, nil)
	}
	p.Stdout, p.Stderr = &out, &errb
	p.Log.SetOutput(&errb)
	code := runProgram(p, args)
	return invocation{code, out.String(), errb.String()}
}

// noEngine makes every docker call of the test fail as with the engine
// down; git is real.
func noEngine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/litterbox-unit-test.sock")
	t.Setenv("DOCKER_CONTEXT", "")
	t.Setenv("LITTERBOX_RUNTIME", "")
	t.Setenv("NO_COLOR", "")
}

// Every command's argument rules: a missing, extra or malformed argument
// or flag is a usage error, exit 2, with one line on stderr naming what
// was wrong and the command's help; nothing on stdout, nothing run.
func TestUsageErrors(t *testing.T) {
	noEngine(t)
	repo := filepath.Join(t.TempDir(), "repo")
	testenv.NewRepo(t, repo, testenv.SmallFiles)
	for _, c := range []struct {
		args []string
		want string // in the error line
	}{
		{[]string{"bogus"}, `Unknown command "bogus"`},
		{[]string{"create"}, "create: accepts 1 arg(s), received 0 (see 'litterbox create --help')"},
		{[]string{"create", "a", "b"}, "create: accepts 1 arg(s), received 2"},
		{[]string{"create", "--bogus", "x"}, "Unknown flag: --bogus"},
		{[]string{"--log-level", "loud", "list"}, `--log-level "loud": want error, warn, info or debug`},
		{[]string{"--runtime", "rkt", "list"}, `--runtime "rkt": want docker, podman or kubernetes`},
		{[]string{"--namespace", "ns", "list"}, `--namespace is a kubernetes option`},
		{[]string{"list", "extra"}, `list: unknown command "extra"`},
		{[]string{"pause"}, "Pause takes exactly one of: a sandbox NAME, --all-envs, --all-repos"},
		{[]string{"resume"}, "Resume takes exactly one of"},
		{[]string{"delete"}, "Delete takes exactly one of: sandbox NAMEs, --all-envs"},
		{[]string{"delete", "box", "--all-envs"}, "Delete takes exactly one of: sandbox NAMEs, --all-envs"},
		{[]string{"shell"}, "shell: accepts 1 arg(s), received 0"},
		{[]string{"exec", "box"}, "exec: requires at least 2 arg(s), only received 1"},
		{[]string{"milestone", "box"}, "milestone: -m MESSAGE is required"},
		{[]string{"diff"}, "diff: name the sandbox"},
		{[]string{"log"}, "log: name the sandbox (or use --audit)"},
		{[]string{"apply"}, "apply: name the sandbox"},
		{[]string{"merge"}, "merge: name the sandbox"},
		{[]string{"upload", "box", "a"}, "upload: accepts 3 arg(s), received 2"},
		{[]string{"download", "box"}, "download: accepts 3 arg(s), received 1"},
		{[]string{"ports"}, "ports: accepts 1 arg(s), received 0"},
		{[]string{"service", "box"}, "service: accepts between 2 and 3 arg(s), received 1"},
		{[]string{"mcp-config"}, "mcp-config: accepts 1 arg(s), received 0"},
		{[]string{"mcp-config", "vim"}, `Unknown client "vim": want one of claude, codex, opencode, cursor, zed`},
		{[]string{"mcp", "extra"}, `mcp: unknown command "extra"`},
		{[]string{"doctor", "extra"}, `doctor: unknown command "extra"`},
		{[]string{"trust", "extra"}, `trust: unknown command "extra"`},
		{[]string{"exec", "box", "--timeout", "soon", "--", "true"}, `Invalid argument "soon" for "--timeout" flag`},
		{[]string{"list", "--json", "--all-repos", "--bogus"}, "Unknown flag: --bogus"},
	} {
		got := invoke(t, nil, append([]string{"--repo", repo}, c.args...)...)
		lines := strings.Split(strings.TrimSuffix(got.stderr, "\n"), "\n")
		if got.code != 2 || got.stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], "Error: ") || !strings.Contains(lines[0], c.want) {
			t.Errorf("litterbox %s: exit %d, stdout %q, stderr %q; want exit 2 and one error line with %q", strings.Join(c.args, " "), got.code, got.stdout, got.stderr, c.want)
		}
	}
}

// Failures that are not the user's typing exit 1, with one line saying
// what was wrong.
func TestFailuresExitOne(t *testing.T) {
	noEngine(t)
	plain := t.TempDir()
	repo := filepath.Join(t.TempDir(), "repo")
	testenv.NewRepo(t, repo, testenv.SmallFiles)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--repo", filepath.Join(plain, "missing"), "list"}, "not a directory"},
		{[]string{"--repo", plain, "list"}, "not a git repository: run litterbox inside a git repository"},
		{[]string{"--repo", repo, "list"}, "Cannot connect to the Docker daemon"},
		{[]string{"--repo", repo, "pause", "box"}, "Cannot connect to the Docker daemon"},
	} {
		got := invoke(t, nil, c.args...)
		if got.code != 1 || got.stdout != "" || !strings.HasPrefix(got.stderr, "Error: ") || !strings.Contains(got.stderr, c.want) {
			t.Errorf("litterbox %s: exit %d, stdout %q, stderr %q; want exit 1 and an error with %q", strings.Join(c.args, " "), got.code, got.stdout, got.stderr, c.want)
		}
	}
}

// Help is asked for, so it is output: stdout, exit 0.
func TestHelp(t *testing.T) {
	noEngine(t)
	for _, args := range [][]string{{"--help"}, {"create", "--help"}, {"help", "exec"}} {
		got := invoke(t, nil, args...)
		if got.code != 0 || !strings.Contains(got.stdout, "Usage:") || got.stderr != "" {
			t.Errorf("litterbox %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), got.code, got.stdout, got.stderr)
		}
	}
	if got := invoke(t, nil, "--version"); got.code != 0 || !strings.HasPrefix(got.stdout, "litterbox version ") {
		t.Errorf("--version: %+v", got)
	}
}

// Colour only where the environment allows it (NO_COLOR set to anything,
// or TERM=dumb, forbid it) and only to a terminal.
func TestColour(t *testing.T) {
	for _, c := range []struct {
		noColor, term string
		want          bool
	}{{"", "xterm", true}, {"1", "xterm", false}, {"0", "xterm", false}, {"", "dumb", false}} {
		t.Setenv("NO_COLOR", c.noColor)
		t.Setenv("TERM", c.term)
		if got := cli.ColorAllowed(); got != c.want {
			t.Errorf("NO_COLOR=%q TERM=%q: colour allowed %v", c.noColor, c.term, got)
		}
	}
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	e := cli.NewProgram(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}).EnvOf()
	if got := e.PaintColumn("NAME   STATUS\nbox    active\n", 7, 1); got != "NAME   STATUS\nbox    active\n" {
		t.Errorf("a buffer (no terminal) got colour: %q", got)
	}
}

// Each command is an options struct and a run function over an env: the
// run functions check what the flags cannot, before anything runs.
func TestRunFunctionsCheckTheirOptions(t *testing.T) {
	noEngine(t)
	e := cli.NewProgram(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}).EnvOf()
	ctx := context.Background()
	for name, err := range map[string]error{
		"pause with nothing":          runBulk(ctx, e, bulkOptions{Verb: "pause"}, nil),
		"pause with a name and --all": runBulk(ctx, e, bulkOptions{Verb: "pause", Name: "x", AllEnvs: true}, nil),
		"resume everywhere twice":     runBulk(ctx, e, bulkOptions{Verb: "resume", AllEnvs: true, AllRepos: true}, nil),
		"mcp with both scopes":        runMCP(ctx, e, mcpOptions{All: true, Sandboxes: []string{"x"}}),
		"service, unknown action":     runService(ctx, e, serviceOptions{Name: "x", Action: "explode"}),
		"service stop, no service":    runService(ctx, e, serviceOptions{Name: "x", Action: "stop"}),
	} {
		var u cli.UsageError
		if !errors.As(err, &u) {
			t.Errorf("%s: %v, want a usage error", name, err)
		}
	}
}
