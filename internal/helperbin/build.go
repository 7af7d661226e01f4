package helperbin

import (
	"debug/buildinfo"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Program is the helper's own program, cmd/litterbox-helper, as it
// lies beside litterbox: on Linux it runs in sandboxes as it is; beside a
// litterbox for another system it is the Linux build for the engine,
// litterbox-helper-linux-<arch>.
func Program() string {
	if runtime.GOOS == "linux" {
		return "litterbox-helper"
	}
	return "litterbox-helper-linux-" + runtime.GOARCH
}

// errNotProven says that two builds may differ: a build of a work tree with
// changes (or with no record of its source) carries no stamp that names
// its source.
var errNotProven = errors.New("neither is stamped with what it was built from: build both with make build (or make install), or install both from one version with go install .../cmd/...@VERSION")

// sameBuild returns nil when the programs self and helper were provably
// built from the same source, so that the helper speaks this litterbox's
// protocol, else what differs. Proof is one of: one clean module version
// (go install pkg@version builds that version's source and nothing else;
// a checkout's build is versioned by its commit, +dirty when the work tree
// has changes, whatever they are); one build stamp (-X main.build=...,
// which make sets for both programs of one build from the work tree's
// content); one VCS revision with no changes.
func sameBuild(self, helper *debug.BuildInfo) error {
	if self.Main.Path != helper.Main.Path {
		return fmt.Errorf("it is of module %s, litterbox of %s", helper.Main.Path, self.Main.Path)
	}
	if helper.Main.Version != self.Main.Version {
		return fmt.Errorf("it is version %s, litterbox %s", helper.Main.Version, self.Main.Version)
	}
	if helper.Main.Sum != self.Main.Sum {
		return fmt.Errorf("it is version %s of another source (module sum %s, litterbox's %s)", helper.Main.Version, orNone(helper.Main.Sum), orNone(self.Main.Sum))
	}
	if cleanVersion(self) && cleanVersion(helper) {
		return nil
	}
	if s, h := buildStamp(self), buildStamp(helper); s != "" || h != "" {
		if h != s {
			return fmt.Errorf("it is build %s, litterbox build %s", orNone(h), orNone(s))
		}
		return nil
	}
	rev := setting(self, "vcs.revision")
	if rev == "" || setting(self, "vcs.modified") != "false" || setting(helper, "vcs.modified") != "false" {
		return errNotProven
	}
	if h := setting(helper, "vcs.revision"); h != rev {
		return fmt.Errorf("it was built from revision %s, litterbox from %s", orNone(h), rev)
	}
	return nil
}

// cleanVersion reports whether bi's module version names one source: a
// released or pseudo-version, not a development build's, nor one of a
// work tree with changes.
func cleanVersion(bi *debug.BuildInfo) bool {
	v := bi.Main.Version
	return v != "" && v != "(devel)" && !strings.HasSuffix(v, "+dirty") && setting(bi, "vcs.modified") != "true"
}

// matchBuild compares the running litterbox's build record, self, with
// the helper program's at path helper. (The running program's, not its
// file's: an install may have replaced both files since it started.)
func matchBuild(self *debug.BuildInfo, helper string) error {
	if self == nil {
		return errors.New("litterbox has no Go build record")
	}
	hb, err := buildinfo.ReadFile(helper)
	if err != nil {
		return fmt.Errorf("it has no Go build record: %w", err)
	}
	return sameBuild(self, hb)
}

// buildStamp is the value of -X main.build=... in the build's linker
// flags, if any.
func buildStamp(bi *debug.BuildInfo) string {
	_, v, ok := strings.Cut(setting(bi, "-ldflags"), "main.build=")
	if !ok {
		return ""
	}
	v, _, _ = strings.Cut(v, " ")
	return strings.Trim(v, `'"`)
}

func setting(bi *debug.BuildInfo, key string) string {
	for _, s := range bi.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

func orNone(s string) string {
	if s == "" {
		return "unstamped"
	}
	return s
}
