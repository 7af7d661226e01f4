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
			_, err := Load(writeConfigs(t, c.file, ""))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if ce.File != File || ce.Line != c.line || ce.Key != c.key || !strings.Contains(ce.Msg, c.msg) {
				t.Fatalf("got line=%d key=%q msg=%q\nwant line=%d key=%q msg~%q", ce.Line, ce.Key, ce.Msg, c.line, c.key, c.msg)
			}
		})
	}
}
