package sandbox

import (
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/runner"
)

func dockerState(s string) box.State { return box.State(s) }

func providerWith(m *Manager, r runner.Runner) box.Provider { return engine.Docker.Provider(r) }
