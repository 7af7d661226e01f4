package sandbox

import (
	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/runner"
)

func dockerState(s string) dockercli.State { return dockercli.State(s) }

func providerWith(m *Manager, r runner.Runner) Provider { return dockercli.New("docker", r) }
