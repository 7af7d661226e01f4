//go:build !linux

package helper

import (
	"fmt"
	"os"
)

// Main refuses to run: the helper only runs inside Linux containers.
func Main([]string) int {
	fmt.Fprintln(os.Stderr, Name+" runs only inside a Linux container")
	return 1
}
