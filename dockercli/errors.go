package dockercli

import "github.com/litterbox-dev/litterbox/internal/box"

// patterns are how docker and podman say each failure kind.
var patterns = []box.Pattern{
	{Kind: box.ErrEngineUnreachable, Needs: []string{"cannot connect to the docker daemon"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"error during connect"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"is the docker daemon running"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"unable to connect to podman"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"context", "does not exist"}},
	{Kind: box.ErrEngineUnreachable, Needs: []string{"context", "not found"}},
	{Kind: box.ErrNameInUse, Needs: []string{"is already in use"}},
	{Kind: box.ErrPortInUse, Needs: []string{"port is already allocated"}},
	{Kind: box.ErrPortInUse, Needs: []string{"address already in use"}},
	{Kind: box.ErrAlreadyPaused, Needs: []string{"is already paused"}},
	{Kind: box.ErrNotPaused, Needs: []string{"is not paused"}},
	{Kind: box.ErrNotRunning, Needs: []string{"is not running"}},
	{Kind: box.ErrPaused, Needs: []string{"is paused"}},
	// Podman says this of paused and stopped containers alike.
	{Kind: box.ErrNotRunning, Needs: []string{"can only create exec sessions on running containers"}},
	{Kind: box.ErrNoSuchVolume, Needs: []string{"no such volume"}},
	{Kind: box.ErrNotFound, Needs: []string{"no such container"}},
	{Kind: box.ErrNotFound, Needs: []string{"no such object"}},
	{Kind: box.ErrNotFound, Needs: []string{"no container with name or id"}},
	{Kind: box.ErrImageNotFound, Needs: []string{"unable to find image"}},
	{Kind: box.ErrImageNotFound, Needs: []string{"no such image"}},
	{Kind: box.ErrImageNotFound, Needs: []string{"pull access denied"}},
	{Kind: box.ErrImageNotFound, Needs: []string{"manifest unknown"}},
	{Kind: box.ErrImageNotFound, Needs: []string{"image not known"}},
	{Kind: box.ErrNoSuchNetwork, Needs: []string{"network", "not found"}},
}

// Classify wraps a runner error with its failure kind, when one is recognised.
func Classify(err error) error { return box.Classify(err, patterns) }
