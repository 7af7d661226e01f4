package cli

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/litterbox-dev/litterbox/internal/box"
)

// ExitCode makes the process exit with a command's own status, silently.
type ExitCode int

func (e ExitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// UsageError is bad command-line usage: exit status 2.
type UsageError struct{ Err error }

func (u UsageError) Error() string { return u.Err.Error() }

func (u UsageError) Unwrap() error { return u.Err }

func Usagef(format string, a ...any) error { return UsageError{Err: fmt.Errorf(format, a...)} }

// Sentence capitalises the first letter and ends msg with a full stop, so every
// error reads the same ("Error: Sandbox 'x' not found.").
func Sentence(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return "unknown error."
	}
	// A leading command name ("exec: ...") keeps its case.
	if first, _, _ := strings.Cut(msg, " "); !strings.HasSuffix(first, ":") {
		r, size := utf8.DecodeRuneInString(msg)
		msg = string(unicode.ToUpper(r)) + msg[size:]
	}
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "?") && !strings.HasSuffix(msg, "!") && !strings.HasSuffix(msg, ")") {
		msg += "."
	}
	return msg
}

// engineFix is what to do about an engine that does not answer.
const engineFix = "start the engine (e.g. systemctl start docker), or point DOCKER_HOST / --context at a running one; litterbox doctor checks it"

// WithFix adds to an error whose cause every command shares the one fix
// for it, where the command did not say it already: an engine that does
// not answer is named as such, not as the engine CLI's own words alone.
func WithFix(err error) error {
	if errors.Is(err, box.ErrEngineUnreachable) && !strings.Contains(err.Error(), "DOCKER_HOST") {
		return fmt.Errorf("the engine is not reachable (%w); %s", err, engineFix)
	}
	return err
}
