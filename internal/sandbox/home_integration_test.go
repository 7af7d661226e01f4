//go:build integration

package sandbox

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// homeSetup writes into the home and a [setup] keep path, and nothing the
// cache kept before this release would have held.
const homeSetup = `mkdir -p $HOME/deps /opt/deps && od -An -N8 -tx8 /dev/urandom > $HOME/deps/lib && ` +
	`cp $HOME/deps/lib /opt/deps/lib`

// A setup's work in the home and in a kept path persists: the setup cache
// keeps it and the next create gets it without running the setup, a fork
// copies it, and delete removes every volume. On every image with a shell.
func TestIntegrationHomeAndKeptPaths(t *testing.T) {
	for _, image := range shellImages {
		t.Run(imageName(image), func(t *testing.T) {
			ctx := context.Background()
			m := repoManager(t, testenv.Files{
				"README.md": "hi\n",
				".litterbox.toml": "[docker]\nimage = \"" + image + "\"\nsetup-command = '" + homeSetup + "'\n" +
					"[setup]\nkeep = [\"/opt/deps\"]\n",
			}, "")
			first, err := m.Create(ctx, create.CreateOptions{Name: "first"})
			if err != nil {
				t.Fatal(err)
			}
			if sc := first.SetupCache; sc == nil || !sc.Saved || sc.Files != 2 {
				t.Fatalf("first create kept %+v, want the two files; warnings %v", sc, first.Warnings)
			}
			stamp := exec(t, m, "first", "cat $HOME/deps/lib")
			if got := exec(t, m, "first", "echo $HOME; cat /opt/deps/lib"); got != "/home/litterbox\n"+stamp {
				t.Fatalf("first: %q", got)
			}

			second, err := m.Create(ctx, create.CreateOptions{Name: "second"})
			if err != nil {
				t.Fatal(err)
			}
			if sc := second.SetupCache; sc == nil || !sc.Hit {
				t.Fatalf("second create missed: %+v", sc)
			}
			if got := exec(t, m, "second", "cat $HOME/deps/lib /opt/deps/lib; stat -c %u $HOME/deps/lib /opt/deps/lib; touch $HOME/mine /opt/deps/mine && echo writable"); got != stamp+stamp+"1000\n1000\nwritable\n" {
				t.Fatalf("second holds %q, want the stamp %q twice, owned by 1000 and writable", got, stamp)
			}
			if n := commitsOn(t, m, "second"); n != 0 {
				t.Fatalf("the home reached the branch: %d commits", n)
			}

			exec(t, m, "second", "echo agent > $HOME/agent-state")
			if _, err := m.Creator.Fork(ctx, create.ForkOptions{Source: "second", Name: "copy"}); err != nil {
				t.Fatal(err)
			}
			if got := exec(t, m, "copy", "cat $HOME/agent-state /opt/deps/lib; echo fork > $HOME/agent-state"); got != "agent\n"+stamp {
				t.Fatalf("the fork holds %q", got)
			}
			if got := exec(t, m, "second", "cat $HOME/agent-state"); got != "agent\n" {
				t.Fatalf("the fork's write reached its source: %q", got)
			}

			vols := volumesOf(t, m, "second")
			if len(vols) != 3 {
				t.Fatalf("second's volumes: %q, want /src, the home and /opt/deps", vols)
			}
			for _, name := range []string{"first", "second", "copy"} {
				if _, err := m.Delete(ctx, name, true); err != nil {
					t.Fatal(err)
				}
				if left := volumesOf(t, m, name); len(left) > 0 {
					t.Fatalf("delete %s left %q", name, left)
				}
			}
		})
	}
}

// volumesOf lists the engine's volumes of sandbox slug, by name.
func volumesOf(t *testing.T, m *Manager, slug string) []string {
	t.Helper()
	out, err := testenv.Docker("volume", "ls", "-q", "--filter", "name=^"+m.Repo.Names(slug).Container+"-")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(out)
}

// The Go example: `go mod download` against a module proxy on the test
// network, through the setup's own allowlist. The module cache lands in
// the home, the setup cache keeps it, and the next sandbox builds offline
// without running the setup.
func TestIntegrationSetupCacheGoModules(t *testing.T) {
	network, _ := testServers(t)
	mod := "module example.test/greet\n\ngo 1.21\n"
	src := "package greet\n\nfunc Hello() string { return \"hello from the proxy\" }\n"
	zipped := moduleZip(t, "example.test/greet@v1.0.0", map[string]string{"go.mod": mod, "greet.go": src})
	testenv.HTTPServer(t, network, "goproxy.test", map[string][]byte{
		"example.test/greet/@v/list":        []byte("v1.0.0\n"),
		"example.test/greet/@v/v1.0.0.info": []byte(`{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`),
		"example.test/greet/@v/v1.0.0.mod":  []byte(mod),
		"example.test/greet/@v/v1.0.0.zip":  zipped,
	})
	m := repoManager(t, testenv.Files{
		"go.mod": "module example.test/app\n\ngo 1.21\n\nrequire example.test/greet v1.0.0\n",
		"go.sum": "example.test/greet v1.0.0 " + hash1(map[string]string{"example.test/greet@v1.0.0/go.mod": mod, "example.test/greet@v1.0.0/greet.go": src}) + "\n" +
			"example.test/greet v1.0.0/go.mod " + hash1(map[string]string{"go.mod": mod}) + "\n",
		"main.go": "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.test/greet\"\n)\n\nfunc main() { fmt.Println(greet.Hello()) }\n",
		".litterbox.toml": "[docker]\nimage = \"litterbox-test/go:bookworm\"\nsetup-command = \"go mod download\"\n" +
			"env = { GOPROXY = \"http://goproxy.test\", GOSUMDB = \"off\" }\n",
	}, "[network]\nsetup = [\"goproxy.test\"]\negress = \""+network+"\"\n")
	createFromCache(t, m, "go run . && go env GOMODCACHE && ls $(go env GOMODCACHE)/example.test", "hello from the proxy\n/home/litterbox/go/pkg/mod\ngreet@v1.0.0\n")
}

// createFromCache creates "one", whose setup runs and is kept, then
// "two" from the cache, and checks that script prints want in each and
// that the setup's work stays off their branches.
func createFromCache(t *testing.T, m *Manager, script, want string) {
	t.Helper()
	for i, name := range []string{"one", "two"} {
		c, err := m.Create(context.Background(), create.CreateOptions{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		if c.Setup.ExitCode != 0 {
			t.Fatalf("%s: setup %+v", name, c.Setup)
		}
		if sc := c.SetupCache; sc == nil || sc.Hit != (i == 1) || sc.Saved != (i == 0) || sc.Files == 0 {
			t.Fatalf("%s: setup cache %+v, warnings %v", name, sc, c.Warnings)
		}
		if got := exec(t, m, name, script); got != want {
			t.Fatalf("%s: %q, want %q", name, got, want)
		}
		if n := commitsOn(t, m, name); n != 0 {
			t.Fatalf("%s: the setup's work reached the branch (%d commits)", name, n)
		}
	}
}

// moduleZip is a module's zip as a proxy serves it: every file under
// module@version/.
func moduleZip(t *testing.T, prefix string, files map[string]string) []byte {
	t.Helper()
	under := map[string]string{}
	for name, body := range files {
		under[prefix+"/"+name] = body
	}
	return zipOf(t, under)
}

// zipOf is a zip archive of files, by name.
func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for name, body := range files {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// hash1 is go.sum's h1: the SHA-256 of the sorted "sha256  name" lines of
// the files (golang.org/x/mod/sumdb/dirhash.Hash1).
func hash1(files map[string]string) string {
	var lines strings.Builder
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&lines, "%x  %s\n", sha256.Sum256([]byte(files[n])), n)
	}
	sum := sha256.Sum256([]byte(lines.String()))
	return "h1:" + base64.StdEncoding.EncodeToString(sum[:])
}

// The Python example: `pip install --user` from a package index on the
// test network. The package lands in the home's ~/.local, the setup cache
// keeps it, and the next sandbox imports it without running the setup.
func TestIntegrationSetupCachePipUser(t *testing.T) {
	network, _ := testServers(t)
	wheel := pyWheel(t, "greet", "1.0", map[string]string{"greet/__init__.py": "def hello():\n    return 'hello from the index'\n"})
	sum := sha256.Sum256(wheel)
	file := "greet-1.0-py3-none-any.whl"
	testenv.HTTPServer(t, network, "pypi.test", map[string][]byte{
		"simple/greet/index.html": fmt.Appendf(nil, "<html><body><a href=\"/packages/%s#sha256=%x\">%s</a></body></html>\n", file, sum, file),
		"packages/" + file:        wheel,
	})
	m := repoManager(t, testenv.Files{
		"requirements.txt": "greet==1.0\n",
		"app.py":           "import greet\nprint(greet.hello())\n",
		".litterbox.toml": "[docker]\nimage = \"" + testenv.PythonImage + "\"\nsetup-command = \"pip install --user -r requirements.txt\"\n" +
			"env = { PIP_INDEX_URL = \"http://pypi.test/simple\", PIP_TRUSTED_HOST = \"pypi.test\", PIP_BREAK_SYSTEM_PACKAGES = \"1\" }\n",
	}, "[network]\nsetup = [\"pypi.test\"]\negress = \""+network+"\"\n")
	createFromCache(t, m, "python3 app.py && python3 -c 'import greet; print(greet.__file__)'", "hello from the index\n/home/litterbox/.local/lib/python3.11/site-packages/greet/__init__.py\n")
}

// pyWheel is a pure-Python wheel of name and version holding files.
func pyWheel(t *testing.T, name, version string, files map[string]string) []byte {
	t.Helper()
	info := name + "-" + version + ".dist-info/"
	all := map[string]string{
		info + "METADATA": "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n",
		info + "WHEEL":    "Wheel-Version: 1.0\nGenerator: litterbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
	}
	for n, body := range files {
		all[n] = body
	}
	var record strings.Builder
	for n, body := range all {
		sum := sha256.Sum256([]byte(body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", n, base64.RawURLEncoding.EncodeToString(sum[:]), len(body))
	}
	record.WriteString(info + "RECORD,,\n")
	all[info+"RECORD"] = record.String()
	return zipOf(t, all)
}
