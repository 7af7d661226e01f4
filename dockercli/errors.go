package dockercli

import (
	"errors"
	"strings"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/runner"
)

var patterns = []struct {
	kind  error
	needs []string
}{
	{box.ErrEngineUnreachable, []string{"cannot connect to the docker daemon"}},
	{box.ErrEngineUnreachable, []string{"error during connect"}},
	{box.ErrEngineUnreachable, []string{"is the docker daemon running"}},
	{box.ErrEngineUnreachable, []string{"unable to connect to podman"}},
	{box.ErrEngineUnreachable, []string{"context", "does not exist"}},
	{box.ErrEngineUnreachable, []string{"context", "not found"}},
	{box.ErrNameInUse, []string{"is already in use"}},
	{box.ErrPortInUse, []string{"port is already allocated"}},
	{box.ErrPortInUse, []string{"address already in use"}},
	{box.ErrAlreadyPaused, []string{"is already paused"}},
	{box.ErrNotPaused, []string{"is not paused"}},
	{box.ErrNotRunning, []string{"is not running"}},
	{box.ErrPaused, []string{"is paused"}},
	// Podman says this of paused and stopped containers alike.
	{box.ErrNotRunning, []string{"can only create exec sessions on running containers"}},
	{box.ErrNoSuchVolume, []string{"no such volume"}},
	{box.ErrNotFound, []string{"no such container"}},
	{box.ErrNotFound, []string{"no such object"}},
	{box.ErrNotFound, []string{"no container with name or id"}},
	{box.ErrImageNotFound, []string{"unable to find image"}},
	{box.ErrImageNotFound, []string{"no such image"}},
	{box.ErrImageNotFound, []string{"pull access denied"}},
	{box.ErrImageNotFound, []string{"manifest unknown"}},
	{box.ErrImageNotFound, []string{"image not known"}},
	{box.ErrNoSuchNetwork, []string{"network", "not found"}},
}

// Classify wraps a runner error with its failure kind, when one is recognised.
func Classify(err error) error {
	if err == nil {
		return nil
	}
	var se *runner.StartError
	if errors.As(err, &se) && errors.Is(se.Err, runner.ErrNotFound) {
		return &box.Error{Kind: box.ErrBinaryMissing, Err: err}
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
			return &box.Error{Kind: p.kind, Err: err}
		}
	}
	return err
}
