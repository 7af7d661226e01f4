package hostrepo

import (
	"errors"
	"fmt"
	"strings"
)

// NotFoundError is returned for a name that matches no sandbox of the repo.
type NotFoundError struct {
	Name string
	// Existing are the sandboxes the repository does have, so the error
	// can say which names would work.
	Existing []string
}

// maxNamed is how many existing sandboxes a not-found error names.
const maxNamed = 8

func (e *NotFoundError) Error() string {
	switch n := len(e.Existing); {
	case n == 0:
		return fmt.Sprintf("sandbox '%s' not found: this repository has no sandboxes (create one with litterbox create NAME, or sandbox-create over MCP)", e.Name)
	case n > maxNamed:
		return fmt.Sprintf("sandbox '%s' not found: this repository has %s and %d more (litterbox list)", e.Name, strings.Join(e.Existing[:maxNamed], ", "), n-maxNamed)
	}
	return fmt.Sprintf("sandbox '%s' not found: this repository has %s", e.Name, strings.Join(e.Existing, ", "))
}

// ErrMissing marks a sandbox whose container is gone while its branch or
// state remain.
var ErrMissing = errors.New("container is missing")

// StepError names the create step that failed.
type StepError struct {
	Step string
	Err  error
	// Left lists resources that could not be rolled back.
	Left []string
}

func (e *StepError) Error() string {
	msg := fmt.Sprintf("%s failed: %v", e.Step, e.Err)
	if len(e.Left) > 0 {
		msg += "; could not clean up: " + strings.Join(e.Left, ", ")
	}
	return msg
}

func (e *StepError) Unwrap() error { return e.Err }
