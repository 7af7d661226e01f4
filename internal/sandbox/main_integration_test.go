//go:build integration

package sandbox

import (
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.SweepStale("lbit", "lbbench")
	testenv.Main(m, removeGoSrc, removeSearch, removeTracked38k, removeBinary, remove100k)
}
