package box

import (
	"errors"
	"fmt"
)

// Failure kinds, tested with errors.Is. Each provider maps its CLI's
// wording (which differs between docker, podman, kubectl and versions)
// onto these, so the core tells failures apart the same way on every
// runtime.
var (
	ErrNotFound          = errors.New("no such container")
	ErrNoSuchVolume      = errors.New("no such volume")
	ErrEngineUnreachable = errors.New("container engine not reachable")
	ErrImageNotFound     = errors.New("image not found")
	ErrNameInUse         = errors.New("container name already in use")
	ErrAlreadyPaused     = errors.New("container already paused")
	ErrNotPaused         = errors.New("container not paused")
	ErrNotRunning        = errors.New("container not running")
	ErrPaused            = errors.New("container is paused")
	ErrBinaryMissing     = errors.New("container runtime binary not found")
	ErrPortInUse         = errors.New("host port already in use")
	ErrNoSuchNetwork     = errors.New("no such network")
	// ErrUnsupported is what a runtime cannot do the way an engine does.
	ErrUnsupported = errors.New("not supported on the kubernetes runtime")
)

// Error is a failed provider command with its kind.
type Error struct {
	Kind error
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() []error {
	return []error{e.Kind, e.Err}
}

// Unsupported says that what cannot be done on this runtime.
func Unsupported(what string) error {
	return fmt.Errorf("%s: %w", what, ErrUnsupported)
}
