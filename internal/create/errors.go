package create

import "fmt"

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
