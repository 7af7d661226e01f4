package reviewcmd

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
)

// A milestone with no message is a usage error before anything is opened
// (the other commands' rows are in package main's TestRunFunctionsCheckTheirOptions).
func TestMilestoneChecksItsOptions(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix:///nonexistent/litterbox-unit-test.sock")
	e := cli.NewProgram(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}).EnvOf()
	err := runMilestone(context.Background(), e, milestoneOptions{Name: "x"})
	var u cli.UsageError
	if !errors.As(err, &u) {
		t.Errorf("milestone without -m: %v, want a usage error", err)
	}
}
