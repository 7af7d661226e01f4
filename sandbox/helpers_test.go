package sandbox

import (
	"crypto/md5"

	"github.com/litterbox-dev/litterbox/dockercli"
	"github.com/litterbox-dev/litterbox/runner"
)

func dockerState(s string) dockercli.State { return dockercli.State(s) }

func providerWith(m *Manager, r runner.Runner) Provider { return dockercli.New("docker", r) }

func md5sum(b []byte) [16]byte { return md5.Sum(b) }
