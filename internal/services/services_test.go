package services

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestStripComments(t *testing.T) {
	got := stripComments("#!/bin/sh\n# comment\n  # indented\n\necho a # trailing stays\n")
	if got != "echo a # trailing stays\n" {
		t.Errorf("got %q", got)
	}
}

func TestParseServiceReport(t *testing.T) {
	states, err := parseReport([]byte("SVC web running 42 -\nSVC db exited - 1\nSVC x not-started - -\n"))
	if err != nil {
		t.Fatal(err)
	}
	if states[0].PID != 42 || states[0].ExitCode != nil || states[1].ExitCode == nil || *states[1].ExitCode != 1 || states[2].State != NotStarted {
		t.Fatalf("got %+v", states)
	}
	if states[0].Log != "/tmp/litterbox/services/web.log" {
		t.Fatalf("log %q", states[0].Log)
	}
	if _, err := parseReport([]byte("garbage\n")); err == nil {
		t.Fatal("garbage accepted")
	}
}

// A stop or status that reads the exit-code file while the monitor is still
// writing it used to print "SVC name stopped - " (an empty fifth field),
// which the parser refused. The script runs here on the host's sh, in a
// temporary state directory.
func TestReportWhileExitCodeIsWritten(t *testing.T) {
	dir := t.TempDir()
	s := strings.Replace(script, "D=/tmp/litterbox/services", "D="+dir, 1)
	if s == script {
		t.Fatal("service.sh no longer sets D=/tmp/litterbox/services")
	}
	for name, content := range map[string]string{"ticker.pid": "999999 tok\n", "ticker.rc": "", "ticker.stopped": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("sh", "-c", s, "service.sh", "status", "ticker").Output()
	if err != nil {
		t.Fatal(err)
	}
	states, err := parseReport(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || states[0].State != "stopped" || states[0].ExitCode != nil {
		t.Fatalf("got %+v from %q", states, out)
	}
}
