package sandbox

import (
	"context"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/engine"
	"github.com/litterbox-dev/litterbox/internal/testenv"
	"github.com/litterbox-dev/litterbox/runner"
)

func dockerState(s string) box.State { return box.State(s) }

func providerWith(m *Manager, r runner.Runner) box.Provider { return engine.Docker.Provider(r) }

// mustOpen opens the repository at dir with real git and no engine.
func mustOpen(t *testing.T, dir string) *Manager {
	t.Helper()
	m, err := Open(context.Background(), testenv.Exec(), engine.Docker, dir, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	return m
}
