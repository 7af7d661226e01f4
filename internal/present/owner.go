package present

import (
	"fmt"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// Owner names who drives a sandbox, for list and watch: its MCP client
// and server process ("claude-code (4242)"), a run session ("run
// (4242)"), a person's command ("cli (4242)"), or "-" for nobody. The
// client's name is the agent's harness's choice: cut short and inert.
func Owner(o *sandbox.Owner) string {
	if o == nil {
		return "-"
	}
	name := o.Kind
	if o.Kind == sandbox.OwnerMCP && o.Client != "" {
		name = agenttext.Inert(agenttext.Elide(agenttext.FirstLine(o.Client), 24))
	}
	return fmt.Sprintf("%s (%d)", name, o.PID)
}
