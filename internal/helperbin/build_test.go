package helperbin

import (
	"context"
	"debug/buildinfo"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

const module = "github.com/litterbox-dev/litterbox"

func info(version, sum string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{Main: debug.Module{Path: module, Version: version, Sum: sum}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

// A helper is taken only when it provably comes from litterbox's source:
// one module version, one build stamp, or one revision with no changes.
func TestSameBuild(t *testing.T) {
	stamp := func(s string) []string { return []string{"-ldflags", "-s -w -X main.version=v -X main.build=" + s} }
	clean := func(rev string) []string { return []string{"vcs.revision", rev, "vcs.modified", "false"} }
	dirty := func(rev string) []string { return []string{"vcs.revision", rev, "vcs.modified", "true"} }
	// What go build stamps a checkout's build with (go1.24 on).
	const pseudo = "v0.0.0-20261129064228-cbbc4c11a5fc"
	for _, c := range []struct {
		name         string
		self, helper *debug.BuildInfo
		differs      string // "" when the two are of one build
	}{
		{"one version", info("v1.2.0", "h1:a"), info("v1.2.0", "h1:a"), ""},
		{"another version", info("v1.2.0", "h1:a"), info("v1.1.0", "h1:b"), "it is version v1.1.0, litterbox v1.2.0"},
		{"one version of another source", info("v1.2.0", "h1:a"), info("v1.2.0", ""), "it is version v1.2.0 of another source (module sum unstamped, litterbox's h1:a)"},
		{"one clean checkout's version", info(pseudo, "", clean("r1")...), info(pseudo, "", clean("r1")...), ""},
		{"one changed checkout's version, unstamped", info(pseudo+"+dirty", "", dirty("r1")...), info(pseudo+"+dirty", "", dirty("r1")...), errNotProven.Error()},
		{"one changed checkout's version, another stamp", info(pseudo+"+dirty", "", append(dirty("r1"), stamp("abc")...)...), info(pseudo+"+dirty", "", append(dirty("r1"), stamp("abd")...)...), "it is build abd, litterbox build abc"},
		{"one changed checkout's version, one stamp", info(pseudo+"+dirty", "", append(dirty("r1"), stamp("abc")...)...), info(pseudo+"+dirty", "", append(dirty("r1"), stamp("abc")...)...), ""},
		{"a changed checkout's helper beside its clean litterbox", info(pseudo, "", clean("r1")...), info(pseudo+"+dirty", "", dirty("r1")...), "it is version " + pseudo + "+dirty, litterbox " + pseudo},
		{"a version beside a development build", info("v1.2.0", "h1:a"), info("(devel)", "", stamp("abc")...), "it is version (devel), litterbox v1.2.0"},
		{"another module", info("v1.2.0", "h1:a"), &debug.BuildInfo{Main: debug.Module{Path: "example.com/x", Version: "v1.2.0"}}, "it is of module example.com/x"},
		{"one stamp", info("(devel)", "", stamp("abc")...), info("(devel)", "", stamp("abc")...), ""},
		{"one stamp, quoted flags", info("(devel)", "", stamp("abc")...), info("(devel)", "", "-ldflags", `-X 'main.build=abc'`), ""},
		{"another stamp", info("(devel)", "", stamp("abc")...), info("(devel)", "", stamp("abd")...), "it is build abd, litterbox build abc"},
		{"a stamped litterbox, an unstamped helper of its revision", info("(devel)", "", append(stamp("abc"), clean("r1")...)...), info("(devel)", "", clean("r1")...), "it is build unstamped, litterbox build abc"},
		{"one clean revision", info("(devel)", "", clean("r1")...), info("(devel)", "", clean("r1")...), ""},
		{"another clean revision", info("(devel)", "", clean("r1")...), info("(devel)", "", clean("r2")...), "it was built from revision r2, litterbox from r1"},
		{"one revision with changes", info("(devel)", "", "vcs.revision", "r1", "vcs.modified", "true"), info("(devel)", "", "vcs.revision", "r1", "vcs.modified", "true"), errNotProven.Error()},
		{"no record of the source", info("(devel)", ""), info("(devel)", ""), errNotProven.Error()},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := sameBuild(c.self, c.helper)
			switch {
			case c.differs == "" && err != nil:
				t.Errorf("not taken: %v", err)
			case c.differs != "" && (err == nil || !strings.Contains(err.Error(), c.differs)):
				t.Errorf("got %v, want %q", err, c.differs)
			}
		})
	}
}

// The helper program beside litterbox is delivered when it is of
// litterbox's build; else litterbox delivers itself and says why.
func TestHelperBeside(t *testing.T) {
	root := strings.TrimSpace(testenv.Git(t, ".", "rev-parse", "--show-toplevel"))
	build := func(stamp, out string) {
		t.Helper()
		// Both are the small helper program: what is compared is the
		// build record, not what the program does. With no VCS stamp
		// (this checkout may have changes, which all builds of it would
		// share as one +dirty version), the build stamp decides.
		if _, err := testenv.Exec().Run(context.Background(), runner.Cmd{Name: "go", Args: []string{"build", "-buildvcs=false", "-ldflags", "-s -w -X main.build=" + stamp, "-o", out, "./cmd/litterbox-helper"}, Dir: root, Env: []string{"CGO_ENABLED=0"}}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	exe, own := filepath.Join(dir, "litterbox"), filepath.Join(dir, Program())
	build("one", exe)
	self, err := buildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}

	h, err := beside(exe, self)
	if err != nil || h.path != exe || !h.Self || h.Passed != "" || !strings.Contains(h.Describe(), "litterbox itself: no litterbox-helper beside it") {
		t.Errorf("alone: %+v %v", h, err)
	}
	build("one", own)
	if h, err := beside(exe, self); err != nil || h.path != own || h.Self || strings.Contains(h.Describe(), "itself") {
		t.Errorf("beside a helper of its build: %+v %v", h, err)
	}
	build("two", own)
	if h, err := beside(exe, self); err != nil || h.path != exe || !h.Self || !strings.Contains(h.Passed, "it is build two, litterbox build one") {
		t.Errorf("beside a helper of another build: %+v %v", h, err)
	}
	if err := os.WriteFile(own, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if h, err := beside(exe, self); err != nil || h.path != exe || !strings.Contains(h.Passed, "has no Go build record") {
		t.Errorf("beside a script of the helper's name: %+v %v", h, err)
	}
}
