//go:build integration

package sandbox

import (
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// Isolation "gvisor" against its own floor, the same docker commands with
// --runtime runsc; BENCHMARKS.md sets each beside the runc row of the same
// operation (Create, BashNoop, Write), which is what gVisor costs.

func gvisorManager(b *testing.B) *Manager {
	cfg := config.Default()
	cfg.Isolation = config.IsolationGVisor
	return benchManagerCfg(b, testenv.SmallFiles, cfg)
}

func gvisorSandbox(b *testing.B) (*Manager, hostrepo.Names) {
	return benchSandboxIn(b, gvisorManager(b))
}

func BenchmarkCreateGVisor(b *testing.B)    { benchCreates(b, gvisorManager(b)) }
func BenchmarkRawCreateGVisor(b *testing.B) { benchRawCreateWith(b, gvisorManager(b)) }
func BenchmarkBashNoopGVisor(b *testing.B) {
	m, _ := gvisorSandbox(b)
	benchBashNoopIn(b, m)
}

func BenchmarkRawBashNoopGVisor(b *testing.B) {
	_, n := gvisorSandbox(b)
	benchRawExecIn(b, n)
}

func BenchmarkWriteGVisor(b *testing.B) {
	m, _ := gvisorSandbox(b)
	benchWriteIn(b, m)
}

func BenchmarkRawWriteGVisor(b *testing.B) { benchRawWriteIn(b, gvisorSandbox) }
