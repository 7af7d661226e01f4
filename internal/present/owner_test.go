package present

import (
	"strings"
	"testing"

	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

func TestOwner(t *testing.T) {
	for _, c := range []struct {
		o    *sandbox.Owner
		want string
	}{
		{nil, "-"},
		{&sandbox.Owner{Kind: sandbox.OwnerMCP, Client: "claude-code", PID: 42}, "claude-code (42)"},
		{&sandbox.Owner{Kind: sandbox.OwnerMCP, PID: 42}, "mcp (42)"},
		{&sandbox.Owner{Kind: sandbox.OwnerRun, PID: 7}, "run (7)"},
		{&sandbox.Owner{Kind: sandbox.OwnerCLI, PID: 9}, "cli (9)"},
		// A hostile client name: its escapes are text, and it is cut.
		{&sandbox.Owner{Kind: sandbox.OwnerMCP, Client: "x\x1b]52;c;aGk=\x07" + strings.Repeat("y", 100), PID: 1}, `x\x1b]52;c;aGk=...yyyyyyyyyyyy (1)`},
	} {
		if got := Owner(c.o); got != c.want {
			t.Errorf("Owner(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
}
