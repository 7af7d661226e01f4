package image

import (
	"slices"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
)

// buildListing is an ls-tree -r -z listing of entries "mode type id\tpath".
func buildListing(entries ...string) string { return strings.Join(entries, "\x00") + "\x00" }

// The build's inputs from a commit's listing: the Dockerfile by blob, the
// context's files that .dockerignore lets through (the Dockerfile and
// .dockerignore always), submodules and files outside the context left
// out; and a digest that moves with what is sent and nothing else.
func TestBuildInputsAndDigest(t *testing.T) {
	b := &config.BuildSpec{Dockerfile: "docker/Dockerfile", Context: "docker", Args: map[string]string{"A": "1"}}
	listing := func(dockerfileID, envID, appID string) string {
		return buildListing(
			"100644 blob "+dockerfileID+"\tdocker/Dockerfile",
			"100644 blob dd01\tdocker/.dockerignore",
			"100644 blob "+envID+"\tdocker/.env",
			"100755 blob "+appID+"\tdocker/app.sh",
			"160000 commit cc01\tdocker/vendored",
			"100644 blob ff01\tREADME.md",
			"100644 blob ff02\tdocker-compose.yml",
		)
	}
	inputs := func(l, network string) (*Inputs, string) {
		in, files := parseBuildTree(l, b, "c0ffee")
		in.ignore = parseDockerignore([]byte("# secrets\n.env\n*.md\nDockerfile\n"))
		in.keep(files)
		return in, in.digest(network)
	}
	in, d := inputs(listing("df01", "e001", "a001"), "none")
	if in.dockerfile != "df01" || in.ignoreID != "dd01" || !in.inside || in.dockerfileInContext() != "Dockerfile" || in.contextTree() != "c0ffee:docker" {
		t.Fatalf("inputs %+v", in)
	}
	want := []string{"100644 dd01 .dockerignore", "100644 df01 Dockerfile", "100755 a001 app.sh"}
	if !slices.Equal(in.files, want) {
		t.Fatalf("sent %q, want %q", in.files, want)
	}
	if _, d2 := inputs(listing("df01", "e002", "a001"), "none"); d2 != d {
		t.Error("an ignored file's change moved the digest")
	}
	for name, other := range map[string]string{
		"dockerfile": listing("df02", "e001", "a001"),
		"context":    listing("df01", "e001", "a002"),
	} {
		if _, d2 := inputs(other, "none"); d2 == d {
			t.Errorf("a changed %s kept the digest", name)
		}
	}
	if _, d2 := inputs(listing("df01", "e001", "a001"), "bridge"); d2 == d {
		t.Error("the build's network is not in the digest")
	}
	// Trust covers the Dockerfile and .dockerignore, not the context's data.
	in1, _ := inputs(listing("df01", "e001", "a001"), "none")
	in2, _ := inputs(listing("df01", "e001", "a002"), "none")
	in3, _ := inputs(listing("df02", "e001", "a001"), "none")
	if in1.TrustDigest() != in2.TrustDigest() || in1.TrustDigest() == in3.TrustDigest() {
		t.Error("trust digest: want it to follow the Dockerfile only")
	}
}

// A Dockerfile outside the context goes into the archive under a name of
// its own; a symlink or a missing one is no Dockerfile; context "." is the
// whole commit.
func TestBuildInputsDockerfileOutside(t *testing.T) {
	b := &config.BuildSpec{Dockerfile: "ci/Dockerfile", Context: "app"}
	in, files := parseBuildTree(buildListing("100644 blob df01\tci/Dockerfile", "100644 blob a001\tapp/main.go", "100644 blob x001\tapp/"+buildContextName), b, "c1")
	in.keep(files)
	if in.inside || in.dockerfile != "df01" || in.dockerfileInContext() != buildContextName || !slices.Equal(in.files, []string{"100644 a001 main.go"}) {
		t.Fatalf("outside: %+v", in)
	}
	link, _ := parseBuildTree(buildListing("120000 blob l001\tci/Dockerfile"), b, "c1")
	if link.dockerfile != "" {
		t.Error("a symlinked Dockerfile was taken")
	}
	root := &config.BuildSpec{Dockerfile: "Dockerfile", Context: "."}
	in, files = parseBuildTree(buildListing("100644 blob df01\tDockerfile", "100644 blob s001\tsrc/x.go"), root, "c2")
	in.keep(files)
	if !in.inside || in.contextTree() != "c2" || len(in.files) != 2 {
		t.Fatalf("root context: %+v", in)
	}
}

// The build has the setup command's network and none otherwise.
func TestBuildNetwork(t *testing.T) {
	for _, tc := range []struct {
		cfg  config.Config
		want string
	}{
		{config.Config{Network: "none"}, "none"},
		{config.Config{Network: "none", SetupOpen: true}, "bridge"},
		{config.Config{Network: "none", SetupOpen: true, EgressNetwork: "corp"}, "corp"},
		{config.Config{Network: "none", SetupAllow: []string{"example.com"}}, "none"},
		{config.Config{Network: "none", Allow: []string{"example.com"}}, "none"},
		{config.Config{Network: "bridge"}, "bridge"},
		{config.Config{Network: "host"}, "none"},
	} {
		if got := buildNetwork(tc.cfg); got != tc.want {
			t.Errorf("buildNetwork(%+v) = %q, want %q", tc.cfg, got, tc.want)
		}
	}
}
