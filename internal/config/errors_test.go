package config

import (
	"errors"
	"strings"
	"testing"
)

// TestLoadConfigErrorPositions: the line and key of a bad value come from
// the parser, wherever the value is: deep in a table, in a later entry of
// an array of tables, or in a syntax error.
func TestLoadConfigErrorPositions(t *testing.T) {
	cases := []struct {
		name, file string
		line       int
		key, msg   string
	}{
		{"nested table", "[docker]\nimage = \"x\"\n[container.services.web]\ncommand = [\"x\"]\n\nsignals = { stop = \"SIGFOO\" }\n", 6, "container.services.web.signals.stop", `unknown signal "SIGFOO"`},
		{"second port", "[[ports]]\nname = \"a\"\ntarget = 80\n[[ports]]\nname = \"b\"\ntarget = 0\n", 6, "ports.target", "port 0 is out of range"},
		{"syntax in a table", "[docker]\nimage = \"x\"\n\nmemory = 2g\n", 4, "docker", "expected a top-level item to end"},
		{"type in a nested table", "[container.services.web]\ncommand = [\"x\"]\n\nstop-timeout = \"3\"\n", 4, "container.services.web.stop-timeout", "want an integer, got a string"},
		{"value for a table", "[docker]\nimage = \"x\"\n[network]\nallow = \"a.test\"\n", 4, "network.allow", "want an array, got a string"},
		// A key that needs quotes is not read back from the library's text:
		// the message is that text, as it always was.
		{"quoted key", "[container.services.\"a b\"]\ncommand = 3\n", 0, "", `line 2 (last key "container.services.\"a b\".command"): want an array of strings or a string, got an integer`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ce := loadError(t, c.file)
			if ce.File != File || ce.Line != c.line || ce.Key != c.key || !strings.Contains(ce.Msg, c.msg) {
				t.Fatalf("got line=%d key=%q msg=%q\nwant line=%d key=%q msg~%q", ce.Line, ce.Key, ce.Msg, c.line, c.key, c.msg)
			}
		})
	}
}

// TestUnknownKeyLines: an unknown key is reported on the line the parser
// saw it on, wherever it is written.
func TestUnknownKeyLines(t *testing.T) {
	cases := []struct {
		name, file string
		line       int
		msg        string
	}{
		{"in a later port only", "[[ports]]\nname = \"a\"\ntarget = 80\n[[ports]]\nname = \"b\"\ntarget = 81\nport = 2\n", 7, "unknown key port in [ports]; known: name, target"},
		{"in an array of inline tables", "ports = [{ name = \"a\", target = 80, port = 1 }]\n", 1, "unknown key port in [ports]; known: name, target"},
		{"a port's key in a service", "[container.services.web]\ncommand = [\"x\"]\n\nname = \"x\"\n", 4, "unknown key name in [container.services.web]; name belongs in [ports]"},
		{"a network key in docker", "[docker]\nimage = \"x\"\nmode = \"allow\"\n", 3, "unknown key mode in [docker]; mode belongs in [network]"},
		{"a docker key in network", "[docker]\nimage = \"x\"\n[network]\nimage = \"y\"\n", 4, "unknown key image in [network]; image belongs in [docker]"},
		{"in a deeper header", "[docker]\nimage = \"x\"\n[container.service.web]\ncommand = \"x\"\n", 3, "unknown key service in [container]; did you mean services?"},
		{"a dotted key", "\ndokcer.image = \"x\"\n", 2, "unknown key dokcer; did you mean [docker]?"},
		{"an inline table", "[secrets]\nA = { env = \"A\" }\nTOKEN = { env = \"T\", cmd = \"x\" }\n", 3, "unknown key cmd in [secrets.TOKEN]; known: command, env, header, inject"},
		{"not in a string before it", "[docker]\nsetup-command = \"\"\"\nimgae = 1\n\"\"\"\nimgae = \"x\"\n", 5, "unknown key imgae in [docker]; did you mean image?"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ce := loadError(t, c.file)
			if ce.Line != c.line || ce.Key != "" || ce.Msg != c.msg {
				t.Fatalf("got line=%d key=%q msg=%q\nwant line=%d msg=%q", ce.Line, ce.Key, ce.Msg, c.line, c.msg)
			}
		})
	}
}

// loadError loads file as the repository's config, for its *Error.
func loadError(t *testing.T, file string) *Error {
	t.Helper()
	_, err := Load(writeConfigs(t, file, ""))
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want an *Error", err)
	}
	return ce
}

// A syntax error gets the fix; a value refused from a file that reads as
// TOML says why itself, and gets none.
func TestSyntaxErrorHasAFix(t *testing.T) {
	for data, fix := range map[string]bool{"[docker\nimage = 1\n": true, "[docker]\nmemory = \"lots\"\n": false, "[docker]\nimage = 3\n": false} {
		_, err := parseConfig(File, []byte(data))
		var e *Error
		if !errors.As(err, &e) || (e.Fix != "") != fix {
			t.Errorf("%q: %v, want a fix: %v", data, err, fix)
		}
	}
}
