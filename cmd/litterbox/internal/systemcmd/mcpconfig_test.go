package systemcmd

import (
	"strings"
	"testing"
)

// mcp-config's note says when PATH would not find this binary, which the
// entry runs by name.
func TestOnPath(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if note := onPath(); !strings.Contains(note, "PATH has none") {
		t.Errorf("with no litterbox on PATH: %q", note)
	}
}
