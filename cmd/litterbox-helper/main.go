// Command litterbox-helper is Litterbox's program inside a sandbox (PID 1,
// the agent's calls, the file tools), built on its own so that each call
// starts only what it needs: litterbox itself can serve as the helper too,
// but its start runs the init of the MCP server's and the CLI's packages,
// about 10 ms of every call. `make build` puts it beside litterbox, where
// litterbox looks for it; see internal/helperbin's Local.
package main

import (
	"os"

	"github.com/litterbox-dev/litterbox/internal/helper"
)

func main() { os.Exit(helper.Main(os.Args[1:])) }
