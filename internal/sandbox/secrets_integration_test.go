//go:build integration

package sandbox

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/audit"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/servicectl"
	"github.com/litterbox-dev/litterbox/internal/snapshot"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

// A secret reaches the setup command, services and agent commands, and
// nothing else: not docker inspect, the debug log, the audit log, a state
// file or a commit. Output shows it masked, and a file holding it stays in
// the sandbox, uncommitted, with a note that says why.
func TestMatrixSecrets(t *testing.T) {
	for _, image := range []string{"busybox:latest", "litterbox-test/debian:bookworm"} {
		t.Run(imageName(image), func(t *testing.T) {
			ctx := context.Background()
			variable := strings.ToUpper(strings.ReplaceAll(testenv.UniqueName("LB_TOKEN"), "-", "_"))
			value := "s3cr3t-" + testenv.UniqueName("v")
			t.Setenv(variable, value)
			dir := filepath.Join(t.TempDir(), testenv.UniqueName("lbsec"))
			testenv.NewRepo(t, dir, testenv.SmallFiles)
			m := imageManager(t, dir, image)
			var debug bytes.Buffer
			log := logrus.New()
			log.SetOutput(&debug)
			log.SetLevel(logrus.DebugLevel)
			useRunner(m, runner.NewExec(log))
			m.Repo.Secrets.Runner = runner.NewExec(log)
			localConfig(t, m, "[secrets]\nTOKEN = { env = \""+variable+"\" }\n")
			m.Repo.Config.Secrets = map[string]config.SecretSpec{"TOKEN": {Env: variable}}
			m.Repo.Config.SetupCommand = `test "$TOKEN" = "` + value + `" && echo setup saw it > setup.txt`
			m.Repo.Config.Services = map[string]config.ServiceSpec{"svc": {Command: []string{"sh", "-c", `echo "svc=$TOKEN"; exec sleep 600`}, Stop: "TERM", StopTimeout: 2}}

			c, err := m.Create(ctx, create.CreateOptions{Name: "work"})
			if err != nil {
				t.Fatal(err)
			}
			if c.Setup.ExitCode != 0 || !strings.Contains(tree(t, m), "setup.txt") {
				t.Fatalf("setup: %+v\n%s", c.Setup, tree(t, m))
			}

			res := bash(t, m, `echo "out $TOKEN"; echo "err $TOKEN" >&2`)
			if res.Stdout != "out ***\n" || res.Stderr != "err ***\n" {
				t.Errorf("output not masked: %q %q", res.Stdout, res.Stderr)
			}
			var streamed bytes.Buffer
			if _, err := m.Agent.Bash(ctx, "work", agent.BashOptions{Command: `printf '%s' "$TOKEN"; printf '%s\n' "$TOKEN"`, Output: &agent.Output{Stdout: &streamed}}); err != nil || streamed.String() != "******\n" {
				t.Errorf("streamed output: %q %v", streamed.String(), err)
			}

			res = bash(t, m, `echo "token=$TOKEN" > leak.txt && echo fine > ok.txt && echo `+value+` >/dev/null`)
			want := []snapshot.Withheld{{Path: "leak.txt", Size: int64(len("token=" + value + "\n")), Limit: snapshot.LimitSecret, Secret: "TOKEN"}}
			if len(res.Withheld) != 1 || res.Withheld[0] != want[0] {
				t.Errorf("withheld %+v, want %+v", res.Withheld, want)
			}
			if notes := strings.Join(res.Notes(), "\n"); !strings.Contains(notes, "leak.txt holds the value of secret TOKEN; it stays in the sandbox") {
				t.Errorf("notes: %s", notes)
			}
			if got := tree(t, m); strings.Contains(got, "leak.txt") || !strings.Contains(got, "ok.txt") {
				t.Errorf("branch holds:\n%s", got)
			}
			if got, size := strings.TrimSpace(bash(t, m, "wc -c < leak.txt").Stdout), len("token="+value+"\n"); got != strconv.Itoa(size) {
				t.Errorf("the sandbox's leak.txt has %s bytes, want %d", got, size)
			}
			if res := bash(t, m, "true"); len(res.Withheld) != 0 {
				t.Errorf("an unchanged file is reported again: %+v", res.Withheld)
			}
			if res := bash(t, m, "echo token=redacted > leak.txt"); res.Snapshot == "" || !strings.Contains(tree(t, m), "leak.txt") {
				t.Errorf("the cleaned file is not committed: %+v", res)
			}
			if _, err := m.Agent.Write(ctx, "work", "written.txt", []byte("key: "+value+"\n")); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(tree(t, m), "written.txt") {
				t.Error("write committed a file holding the secret")
			}

			var logs strings.Builder
			if err := servicectl.Logs(ctx, m.Repo, "work", "svc", 0, false, &logs); err != nil || !strings.Contains(logs.String(), "svc=***") {
				t.Errorf("service log: %q %v", logs.String(), err)
			}
			if err := m.Repo.AppendAudit(audit.Entry{Tool: "bash", Sandbox: "work", Arguments: map[string]any{"command": "echo " + value}}); err != nil {
				t.Fatal(err)
			}

			n := m.Repo.Names("work")
			for what, text := range map[string]string{
				"docker inspect": mustDocker(t, "inspect", n.Container),
				"the debug log":  debug.String(),
				"the branch":     testenv.Git(t, m.Repo.Root, "log", "-p", "--format=%B", "litterbox/work"),
				"state files":    readTree(t, filepath.Join(m.Repo.GitDir, "litterbox")),
			} {
				if i := strings.Index(text, value); i >= 0 {
					t.Errorf("%s holds the secret: %q", what, text[max(0, i-300):i])
				}
			}
			if !strings.Contains(debug.String(), "--env TOKEN ") {
				t.Errorf("the debug log does not name the secret it passes")
			}
		})
	}
}

// A secret that cannot be read stops create before anything is made.
func TestIntegrationSecretMissing(t *testing.T) {
	m := realManager(t)
	m.Repo.Config.Secrets = map[string]config.SecretSpec{"TOKEN": {Env: "LB_SURELY_UNSET_" + strings.ToUpper(strings.ReplaceAll(testenv.UniqueName("x"), "-", "_"))}}
	_, err := m.Create(context.Background(), create.CreateOptions{Name: "work"})
	if err == nil || !strings.Contains(err.Error(), "secret TOKEN: LB_SURELY_UNSET_") || !strings.Contains(err.Error(), "is not set in the environment litterbox runs in") {
		t.Fatalf("create: %v", err)
	}
	if left := leftovers(t, m, "work"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func mustDocker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := testenv.Docker(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readTree concatenates every file under dir.
func readTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		b.WriteString("\n" + p + ":\n")
		b.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
