package devcontainer

import (
	"reflect"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/slug"
)

func TestExpandContainerEnv(t *testing.T) {
	image := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/root", "EMPTY": ""}
	cases := []struct {
		name      string
		json      string
		image     map[string]string
		wantEnv   map[string]string
		wantSetup string
	}{
		{
			name:    "value, default, nothing",
			json:    `{"remoteEnv": {"P": "${containerEnv:PATH}:/go/bin", "G": "${containerEnv:GOPATH:/go}", "N": "[${containerEnv:NOPE}]"}}`,
			image:   image,
			wantEnv: map[string]string{"P": "/usr/bin:/bin:/go/bin", "G": "/go", "N": "[]"},
		},
		{
			name:    "set but empty is not the default",
			json:    `{"remoteEnv": {"E": "${containerEnv:EMPTY:d}"}}`,
			image:   image,
			wantEnv: map[string]string{"E": ""},
		},
		{
			// The reference implementation splits on every ":", so the
			// default ends at the next one.
			name:    "default with a colon",
			json:    `{"remoteEnv": {"U": "${containerEnv:URL:http://x}"}}`,
			image:   image,
			wantEnv: map[string]string{"U": "http"},
		},
		{
			name:    "no image environment",
			json:    `{"remoteEnv": {"P": "${containerEnv:PATH}", "G": "${containerEnv:GOPATH:/go}"}}`,
			wantEnv: map[string]string{"P": "", "G": "/go"},
		},
		{
			name:    "containerEnv sees the image, remoteEnv sees containerEnv too",
			json:    `{"containerEnv": {"PATH": "${containerEnv:PATH}:/opt/bin", "GOPATH": "/go"}, "remoteEnv": {"GOBIN": "${containerEnv:GOPATH}/bin", "P2": "${containerEnv:PATH}"}}`,
			image:   image,
			wantEnv: map[string]string{"PATH": "/usr/bin:/bin:/opt/bin", "GOPATH": "/go", "GOBIN": "/go/bin", "P2": "/usr/bin:/bin:/opt/bin"},
		},
		{
			name:    "remoteEnv wins and null unsets",
			json:    `{"containerEnv": {"A": "${containerEnv:HOME}", "B": "b"}, "remoteEnv": {"A": "${containerEnv:A}!", "B": null}}`,
			image:   image,
			wantEnv: map[string]string{"A": "/root!"},
		},
		{
			name:      "commands",
			json:      `{"containerEnv": {"Q": "it's"}, "postCreateCommand": {"a": "echo ${containerEnv:HOME}", "b": ["echo", "${containerEnv:Q}", "${containerEnv:X:d}"]}}`,
			image:     image,
			wantEnv:   map[string]string{"Q": "it's"},
			wantSetup: `sh -c 'echo /root' && 'echo' 'it'\''s' 'd'`,
		},
		{
			name:    "other references stay",
			json:    `{"remoteEnv": {"A": "${HOME} ${devcontainerId} $PATH ${containerEnv:HOME}"}}`,
			image:   image,
			wantEnv: map[string]string{"A": "${HOME} ${devcontainerId} $PATH /root"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(dcName, []byte(c.json))
			if err != nil {
				t.Fatal(err)
			}
			f.ExpandContainerEnv(c.image)
			if !reflect.DeepEqual(f.Env, c.wantEnv) {
				t.Errorf("Env = %v, want %v", f.Env, c.wantEnv)
			}
			if f.Setup != c.wantSetup {
				t.Errorf("Setup = %s, want %s", f.Setup, c.wantSetup)
			}
		})
	}
}

func TestExpandContainerEnvAgain(t *testing.T) {
	f, err := Parse(dcName, []byte(`{"remoteEnv": {"P": "${containerEnv:PATH}:/x"}, "postCreateCommand": "echo ${containerEnv:PATH}"}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Env["P"] != "${containerEnv:PATH}:/x" || f.Setup != "echo ${containerEnv:PATH}" {
		t.Fatalf("before: Env %v, Setup %q", f.Env, f.Setup)
	}
	f.ExpandContainerEnv(map[string]string{"PATH": "/a"})
	f.ExpandContainerEnv(map[string]string{"PATH": "/b"})
	if f.Env["P"] != "/b:/x" || f.Setup != "echo /b" {
		t.Errorf("after a second call: Env %v, Setup %q; want the second image's", f.Env, f.Setup)
	}
}

func TestExpandContainerEnvKeepsImage(t *testing.T) {
	image := map[string]string{"PATH": "/bin"}
	f, err := Parse(dcName, []byte(`{"containerEnv": {"PATH": "/x", "A": "a"}}`))
	if err != nil {
		t.Fatal(err)
	}
	f.ExpandContainerEnv(image)
	if len(image) != 1 || image["PATH"] != "/bin" {
		t.Errorf("image environment changed to %v", image)
	}
}

func TestReplaceRefs(t *testing.T) {
	cases := map[string]string{
		"":                   "",
		"plain":              "plain",
		"${a}":               "<a>",
		"x${a}y${b:c:d}z":    "x<a>y<b|c|d>z",
		"${a${b}":            "<a${b>",
		"${unterminated":     "${unterminated",
		"$a ${} {b}":         "$a <> {b}",
		"${a}}":              "<a>}",
		"${x:}":              "<x|>",
		"${containerEnv:P:}": "<containerEnv|P|>",
	}
	for in, want := range cases {
		got := replaceRefs(in, func(r ref) string {
			return "<" + strings.Join(append([]string{r.name}, r.args...), "|") + ">"
		})
		if got != want {
			t.Errorf("replaceRefs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPortNames(t *testing.T) {
	long := strings.Repeat("a", 70)
	taken := map[string]bool{}
	first := unique(portName(long, 1), taken)
	second := unique(portName(long, 2), taken)
	tenth := ""
	for i := 3; i <= 10; i++ {
		tenth = unique(portName(long, i), taken)
	}
	for _, n := range []string{first, second, tenth} {
		if !slug.Valid(n) {
			t.Errorf("%q is not a slug", n)
		}
	}
	if first != strings.Repeat("a", slug.MaxLen) || second != strings.Repeat("a", slug.MaxLen-2)+"-2" || tenth != strings.Repeat("a", slug.MaxLen-3)+"-10" {
		t.Errorf("got %q, %q, %q", first, second, tenth)
	}
	// A cut that ends on a dash must not leave it there.
	dashed := strings.Repeat("a", 62) + " b"
	if got := portName(dashed, 1); got != strings.Repeat("a", 62) {
		t.Errorf("portName(%q) = %q", dashed, got)
	}
}

func TestIgnoredAreOneLine(t *testing.T) {
	f, err := Parse(dcName, []byte(`{"features": {"a\nb": {}}, "containerEnv": {"X": "${localEnv:A\nB}"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Ignored) != 2 {
		t.Fatalf("Ignored = %q", f.Ignored)
	}
	for _, s := range f.Ignored {
		if strings.ContainsAny(s, "\r\n") {
			t.Errorf("%q is not one line", s)
		}
	}
}
