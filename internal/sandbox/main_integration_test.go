//go:build integration

package sandbox

import (
	"fmt"
	"os"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/testenv"
)

func TestMain(m *testing.M) {
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
