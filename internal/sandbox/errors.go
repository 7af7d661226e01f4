package sandbox

import (
	"fmt"
	"strings"
)

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

// PartialDeleteError reports what a failed delete left behind.
type PartialDeleteError struct {
	Name string
	Left []string
}

func (e *PartialDeleteError) Error() string {
	return fmt.Sprintf("sandbox '%s' was only partly deleted; still present: %s", e.Name, strings.Join(e.Left, "; "))
}
