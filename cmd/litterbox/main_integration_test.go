//go:build integration

package main

import (
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
)

// TestMain gives the sandboxes that the integration tests and benchmarks
// make in process a real helper, and room for 20 of them (testenv.Main).
func TestMain(m *testing.M) { testenv.Main(m) }
