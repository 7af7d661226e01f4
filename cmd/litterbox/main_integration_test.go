//go:build integration

package main

import (
	"fmt"
	"os"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// TestMain gives the sandboxes that the integration tests and benchmarks
// make in process a real helper: a static build of this program.
func TestMain(m *testing.M) {
	cleanup, err := testenv.UseHelper()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}
