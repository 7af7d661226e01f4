// Package setupcache keeps what a setup command added to a sandbox's /src
// in a volume of the repository's own, keyed by everything the setup's
// result depends on, so that the next create with the same key copies it
// instead of running the setup again.
package setupcache

import (
	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/image"
)

// Cache is one repository's setup cache.
type Cache struct {
	// Agent's helper makes the volume copies.
	Agent *agent.Agent
	// Images gives the tag of HEAD's project image, which prune keeps.
	Images *image.Builder
}
