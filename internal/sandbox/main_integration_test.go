//go:build integration

package sandbox

import (
	"fmt"
	"os"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/testenv"
)

func TestMain(m *testing.M) {
	// The suites run side by side on one engine, with more sandboxes at
	// once than the memory budget lets a machine have; TestIntegrationHostLimits
	// sets the budget it tests in its config.
	os.Setenv(config.BudgetEnv, "1000%")
	testenv.SweepStale("lbit", "lbbench")
	cleanup, err := testenv.UseHelper()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	removeGoSrc()
	removeSearch()
	os.Exit(code)
}
