package main

import (
	"strings"
	"testing"
)

func TestCheckFile(t *testing.T) {
	for name, c := range map[string]struct {
		src  string
		want []string
	}{
		"os/exec":        {`package p; import "os/exec"; var _ = exec.Command`, []string{"imports os/exec"}},
		"renamed":        {`package p; import x "os/exec"; var _ = x.Command`, []string{"imports os/exec"}},
		"StartProcess":   {`package p; import "os"; var _, _ = os.StartProcess("x", nil, nil)`, []string{"uses os.StartProcess"}},
		"aliased":        {`package p; import sys "syscall"; func f() { _ = sys.Exec("/bin/sh", nil, nil) }`, []string{"uses syscall.Exec"}},
		"ForkExec value": {`package p; import "syscall"; var f = syscall.ForkExec`, []string{"uses syscall.ForkExec"}},
		"unix.Exec":      {`package p; import "golang.org/x/sys/unix"; var f = unix.Exec`, []string{"uses golang.org/x/sys/unix.Exec"}},
		"dot import":     {`package p; import . "syscall"; var f = Getpid`, []string{"dot-imports syscall"}},
		"harmless":       {`package p; import ("os"; "syscall"); var _ = os.Getpid(); var _ = syscall.Kill`, nil},
		"blank":          {`package p; import _ "os/exec"`, nil},
	} {
		got, err := checkFile(name+".go", c.src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: got %q, want %q", name, got, c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: got %q, want %q", name, got[i], w)
			}
		}
	}
}
