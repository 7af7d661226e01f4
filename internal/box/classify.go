package box

import (
	"errors"
	"strings"

	"github.com/litterbox-dev/litterbox/runner"
)

// Pattern is a failure kind and the words a runtime CLI says it with on
// stderr: all of them, in lower case.
type Pattern struct {
	Kind  error
	Needs []string
}

// Classify wraps a runner error with the kind of the first pattern whose
// words its stderr holds, so the core tells failures apart the same way on
// every runtime; a CLI that is not installed is ErrBinaryMissing. Any
// other error is returned as it is.
func Classify(err error, patterns []Pattern) error {
	if err == nil {
		return nil
	}
	var se *runner.StartError
	if errors.As(err, &se) && errors.Is(se.Err, runner.ErrNotFound) {
		return &Error{Kind: ErrBinaryMissing, Err: err}
	}
	ee, ok := runner.AsExit(err)
	if !ok {
		return err
	}
	msg := strings.ToLower(string(ee.Result.Stderr))
	for _, p := range patterns {
		if holdsAll(msg, p.Needs) {
			return &Error{Kind: p.Kind, Err: err}
		}
	}
	return err
}

func holdsAll(msg string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(msg, w) {
			return false
		}
	}
	return true
}
