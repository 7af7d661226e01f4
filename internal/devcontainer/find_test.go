package devcontainer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	cases := []struct {
		name  string
		files []string
		dirs  []string
		want  string
	}{
		{name: "none", want: ""},
		{name: "in .devcontainer", files: []string{".devcontainer/devcontainer.json"}, want: ".devcontainer/devcontainer.json"},
		{name: "at the root", files: []string{".devcontainer.json"}, want: ".devcontainer.json"},
		{name: ".devcontainer first", files: []string{".devcontainer.json", ".devcontainer/devcontainer.json"}, want: ".devcontainer/devcontainer.json"},
		{name: "empty .devcontainer", dirs: []string{".devcontainer"}, files: []string{".devcontainer.json"}, want: ".devcontainer.json"},
		{name: ".devcontainer is a file", files: []string{".devcontainer", ".devcontainer.json"}, want: ".devcontainer.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range c.dirs {
				if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range c.files {
				write(t, root, f, "{}")
			}
			got, err := Find(root)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Find = %q, want %q", got, c.want)
			}
		})
	}
}

func TestFindDirectory(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".devcontainer", "devcontainer.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Find(root)
	if err == nil || err.Error() != ".devcontainer/devcontainer.json: is a directory" {
		t.Errorf("Find: %v", err)
	}
}

func TestFindNoRoot(t *testing.T) {
	if _, err := Find(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Find on a missing root: no error")
	}
}

func TestLoad(t *testing.T) {
	root := filepath.Join(t.TempDir(), "my-repo")
	write(t, root, ".devcontainer/devcontainer.json", `{
		// the project's own container
		"build": {"dockerfile": "Dockerfile", "context": ".."},
		"containerEnv": {"PROJECT": "${localWorkspaceFolderBasename}"},
	}`)
	rel, err := Find(root)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Load(root, rel)
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, f, File{
		Name:  ".devcontainer/devcontainer.json",
		Build: &Build{Dockerfile: ".devcontainer/Dockerfile", Context: "."},
		Env:   map[string]string{"PROJECT": "my-repo"},
	})
}

func TestLoadRelativeRoot(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proj")
	write(t, root, ".devcontainer.json", `{"containerEnv": {"P": "${localWorkspaceFolderBasename}"}}`)
	t.Chdir(root)
	f, err := Load(".", ".devcontainer.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Env["P"] != "proj" {
		t.Errorf("P = %q, want the directory's name", f.Env["P"])
	}
}

func TestLoadErrors(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".devcontainer.json", "{\n\"image\": \"x\"\n\"build\": {}\n}")
	_, err := Load(root, ".devcontainer.json")
	if err == nil || !strings.HasPrefix(err.Error(), ".devcontainer.json: line 3: invalid JSON: ") {
		t.Errorf("invalid file: %v", err)
	}
	_, err = Load(root, ".devcontainer/devcontainer.json")
	if err == nil || !strings.HasPrefix(err.Error(), ".devcontainer/devcontainer.json: ") {
		t.Errorf("missing file: %v", err)
	}
}

// A repository must not be able to make Litterbox read a file of the
// host's by linking to it.
func TestLoadRefusesLinkOutOfRoot(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, "secret.json", `{"image": "host-secret"}`)
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, ".devcontainer"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, ".devcontainer", "devcontainer.json")
	if err := os.Symlink(filepath.Join(outside, "secret.json"), link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if f, err := Load(root, ".devcontainer/devcontainer.json"); err == nil {
		t.Errorf("Load followed a link out of the repository: %+v", f)
	}
	if rel, err := Find(root); err == nil {
		t.Errorf("Find = %q, no error for a link out of the repository", rel)
	}
}

func TestLoadFollowsLinkInRoot(t *testing.T) {
	root := t.TempDir()
	write(t, root, ".devcontainer/devcontainer.json", `{"image": "x"}`)
	if err := os.Symlink(".devcontainer/devcontainer.json", filepath.Join(root, ".devcontainer.json")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	f, err := Load(root, ".devcontainer.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Image != "x" {
		t.Errorf("Image = %q", f.Image)
	}
}
