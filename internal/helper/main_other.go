//go:build !linux

package helper

import (
	"fmt"
	"os"
)

// Name is the helper's file name in the sandbox.
const Name = "litterbox-helper"

// Main refuses to run: the helper only runs inside Linux containers.
func Main([]string) int {
	fmt.Fprintln(os.Stderr, "litterbox-helper runs only inside a Linux container")
	return 1
}
