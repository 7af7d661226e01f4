package services

import (
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
