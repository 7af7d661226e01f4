package dockercli

import (
	"errors"
	"strings"

	"github.com/litterbox-dev/litterbox/runner"
)

// Failure kinds, tested with errors.Is. The engine's wording differs between
// docker, podman and versions, so every message is matched here and nowhere else.
var (
	ErrNoSuchContainer   = errors.New("no such container")
	ErrNoSuchVolume      = errors.New("no such volume")
	ErrDaemonUnreachable = errors.New("container engine not reachable")
	ErrImageNotFound     = errors.New("image not found")
	ErrNameInUse         = errors.New("container name already in use")
	ErrAlreadyPaused     = errors.New("container already paused")
	ErrNotPaused         = errors.New("container not paused")
	ErrNotRunning        = errors.New("container not running")
	ErrPaused            = errors.New("container is paused")
	ErrBinaryMissing     = errors.New("container runtime binary not found")
	ErrPortInUse         = errors.New("host port already in use")
	ErrNoSuchNetwork     = errors.New("no such network")
)

// Error is a failed docker command with its kind.
type Error struct {
	Kind error
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() []error {
	return []error{e.Kind, e.Err}
}

var patterns = []struct {
	kind  error
	needs []string
}{
	{ErrDaemonUnreachable, []string{"cannot connect to the docker daemon"}},
	{ErrDaemonUnreachable, []string{"error during connect"}},
	{ErrDaemonUnreachable, []string{"is the docker daemon running"}},
	{ErrDaemonUnreachable, []string{"unable to connect to podman"}},
	{ErrDaemonUnreachable, []string{"context", "does not exist"}},
	{ErrDaemonUnreachable, []string{"context", "not found"}},
	{ErrNameInUse, []string{"is already in use"}},
	{ErrPortInUse, []string{"port is already allocated"}},
	{ErrPortInUse, []string{"address already in use"}},
	{ErrAlreadyPaused, []string{"is already paused"}},
	{ErrNotPaused, []string{"is not paused"}},
	{ErrNotRunning, []string{"is not running"}},
	{ErrPaused, []string{"is paused"}},
	// Podman says this of paused and stopped containers alike.
	{ErrNotRunning, []string{"can only create exec sessions on running containers"}},
	{ErrNoSuchVolume, []string{"no such volume"}},
	{ErrNoSuchContainer, []string{"no such container"}},
	{ErrNoSuchContainer, []string{"no such object"}},
	{ErrNoSuchContainer, []string{"no container with name or id"}},
	{ErrImageNotFound, []string{"unable to find image"}},
	{ErrImageNotFound, []string{"no such image"}},
	{ErrImageNotFound, []string{"pull access denied"}},
	{ErrImageNotFound, []string{"manifest unknown"}},
	{ErrImageNotFound, []string{"image not known"}},
	{ErrNoSuchNetwork, []string{"network", "not found"}},
}

// Classify wraps a runner error with its failure kind, when one is recognised.
func Classify(err error) error {
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
		all := true
		for _, n := range p.needs {
			if !strings.Contains(msg, n) {
				all = false
				break
			}
		}
		if all {
			return &Error{Kind: p.kind, Err: err}
		}
	}
	return err
}
