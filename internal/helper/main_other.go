//go:build !linux

package helper

import (
	"fmt"
	"os"

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
)

// Main refuses to run: the helper only runs inside Linux containers.
func Main([]string) int {
	fmt.Fprintln(os.Stderr, protocol.Name+" runs only inside a Linux container")
	return 1
}
