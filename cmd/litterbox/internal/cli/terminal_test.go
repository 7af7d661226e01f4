package cli

import (
	"os"
	"strings"
	"testing"
)

// /dev/null is a character device, not a terminal: output sent there
// (cron, CI, `> /dev/null`) gets no colours and no progress.
func TestIsTerminalNotDevNull(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Error("/dev/null counted as a terminal")
	}
	if IsTerminal(&strings.Builder{}) {
		t.Error("a buffer counted as a terminal")
	}
}
