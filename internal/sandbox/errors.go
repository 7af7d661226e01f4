package sandbox

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

// ExistsError is returned by Create for a name that is taken.
type ExistsError struct {
	Name   string
	Detail string
}

func (e *ExistsError) Error() string {
	msg := fmt.Sprintf("sandbox '%s' already exists; please choose a different name", e.Name)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// ActiveError is returned by Delete for a running sandbox without force.
type ActiveError struct{ Name string }

func (e *ActiveError) Error() string {
	return fmt.Sprintf("sandbox '%s' is active; pause it first or use --force to delete it anyway", e.Name)
}

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

// PartialDeleteError reports what a failed delete left behind.
type PartialDeleteError struct {
	Name string
	Left []string
}

func (e *PartialDeleteError) Error() string {
	return fmt.Sprintf("sandbox '%s' was only partly deleted; still present: %s", e.Name, strings.Join(e.Left, "; "))
}

// ErrMissing marks a sandbox whose container is gone while its branch or
// state remain.
var ErrMissing = errors.New("container is missing")
