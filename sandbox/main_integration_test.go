//go:build integration

package sandbox

import (
	"os"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.SweepStale("lbit", "lbbench")
	os.Exit(m.Run())
}
