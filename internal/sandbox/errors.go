package sandbox

import (
	"fmt"
	"strings"
)

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
