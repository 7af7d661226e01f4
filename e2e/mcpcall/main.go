// Command mcpcall is the e2e tests' MCP client: it launches `litterbox mcp`
// over stdio, initializes a session, calls tools and prints each
// CallToolResult as one JSON line on stdout:
//
//	{"tool":"sandbox-create","isError":false,"structuredContent":{...},"text":"..."}
//
// Usage:
//
//	mcpcall [--bin LITTERBOX] [--repo DIR] [-v] [--parallel] TOOL ARGS_JSON [TOOL ARGS_JSON ...]
//
// The binary defaults to $LITTERBOX, else "litterbox" on PATH. Several
// TOOL ARGS_JSON pairs are called in one session, in order, or all at once with
// --parallel (results are still printed in argument order). The server's
// stderr is passed through to ours. Exit status: 0 when every call was made
// (even if a result has isError set), 1 when a call could not be made (protocol
// error, server gone), 2 on bad usage.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

type call struct {
	tool string
	args map[string]any
}

type output struct {
	Tool              string `json:"tool"`
	IsError           bool   `json:"isError"`
	StructuredContent any    `json:"structuredContent"`
	Text              string `json:"text"`
}

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("mcpcall", flag.ContinueOnError)
	bin := fs.String("bin", os.Getenv("LITTERBOX"), "litterbox binary (default $LITTERBOX, else litterbox on PATH)")
	repo := fs.String("repo", "", "repository passed to litterbox mcp --repo")
	verbose := fs.Bool("v", false, "run litterbox -v mcp")
	parallel := fs.Bool("parallel", false, "make the calls concurrently")
	timeout := fs.Duration("timeout", 2*time.Minute, "overall time limit")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 || len(rest)%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: mcpcall [--bin B] [--repo DIR] [-v] [--parallel] TOOL ARGS_JSON [TOOL ARGS_JSON ...]")
		return 2
	}
	var calls []call
	for i := 0; i < len(rest); i += 2 {
		args := map[string]any{}
		if err := json.Unmarshal([]byte(rest[i+1]), &args); err != nil {
			fmt.Fprintf(os.Stderr, "mcpcall: arguments of %s are not a JSON object: %v\n", rest[i], err)
			return 2
		}
		calls = append(calls, call{tool: rest[i], args: args})
	}
	if *bin == "" {
		*bin = "litterbox"
	}
	var argv []string
	if *verbose {
		argv = append(argv, "-v")
	}
	argv = append(argv, "mcp")
	if *repo != "" {
		argv = append(argv, "--repo", *repo)
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	c, err := client.NewStdioMCPClientWithOptions(*bin, nil, argv, transport.WithCommandStderrWriter(os.Stderr))
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpcall: starting %s %s: %v\n", *bin, strings.Join(argv, " "), err)
		return 1
	}
	defer c.Close()

	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "litterbox-e2e", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		fmt.Fprintf(os.Stderr, "mcpcall: initialize: %v\n", err)
		return 1
	}

	outs := make([]output, len(calls))
	errs := make([]error, len(calls))
	do := func(i int) {
		req := mcp.CallToolRequest{}
		req.Params.Name = calls[i].tool
		req.Params.Arguments = calls[i].args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			errs[i] = err
			return
		}
		o := output{Tool: calls[i].tool, IsError: res.IsError, StructuredContent: res.StructuredContent}
		var text []string
		for _, content := range res.Content {
			if t, ok := mcp.AsTextContent(content); ok {
				text = append(text, t.Text)
			}
		}
		o.Text = strings.Join(text, "\n")
		outs[i] = o
	}
	if *parallel {
		var wg sync.WaitGroup
		for i := range calls {
			wg.Add(1)
			go func() { defer wg.Done(); do(i) }()
		}
		wg.Wait()
	} else {
		for i := range calls {
			do(i)
		}
	}

	code := 0
	enc := json.NewEncoder(os.Stdout)
	for i := range calls {
		if errs[i] != nil {
			fmt.Fprintf(os.Stderr, "mcpcall: calling %s: %v\n", calls[i].tool, errs[i])
			code = 1
			continue
		}
		if err := enc.Encode(outs[i]); err != nil {
			fmt.Fprintf(os.Stderr, "mcpcall: %v\n", err)
			code = 1
		}
	}
	return code
}
