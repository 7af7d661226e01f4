// Command mcpcall is the e2e tests' MCP client: it launches `litterbox mcp`
// over stdio, initializes a session, calls tools and prints each
// CallToolResult as one JSON line on stdout:
//
//	{"tool":"sandbox-create","isError":false,"structuredContent":{...},"text":"..."}
//
// Usage:
//
//	mcpcall [--client mcp-go|sdk] [--bin LITTERBOX] [--repo DIR] [-v] [--parallel] [--timeout D] TOOL ARGS_JSON [TOOL ARGS_JSON ...]
//
// --client picks the MCP client library: mcp-go (github.com/mark3labs/mcp-go,
// the default, also $MCPCALL_CLIENT) or sdk (the official
// github.com/modelcontextprotocol/go-sdk). Both talk to the same server
// process, which mcpcall starts itself with os.StartProcess and plain pipes
// (only runner/ may import os/exec, e2e programs included).
//
// The binary defaults to $LITTERBOX, else "litterbox" on PATH. Several
// TOOL ARGS_JSON pairs are called in one session, in order, or all at once with
// --parallel (results are still printed in argument order). The server's
// stderr is passed through to ours. Exit status: 0 when every call was made
// (even if a result has isError set), 1 when a call could not be made (protocol
// error, server gone) or the server did not exit cleanly once its stdin
// closed, 2 on bad usage.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	gomcp "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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

// session is one initialized MCP client session, whichever library made it.
type session interface {
	call(ctx context.Context, c call) (output, error)
	close() error
}

func main() {
	os.Exit(run())
}

func run() int {
	fs := flag.NewFlagSet("mcpcall", flag.ContinueOnError)
	clientName := fs.String("client", envOr("MCPCALL_CLIENT", "mcp-go"), "MCP client library: mcp-go or sdk")
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
		fmt.Fprintln(os.Stderr, "usage: mcpcall [--client mcp-go|sdk] [--bin B] [--repo DIR] [-v] [--parallel] [--timeout D] TOOL ARGS_JSON [TOOL ARGS_JSON ...]")
		return 2
	}
	if *clientName != "mcp-go" && *clientName != "sdk" {
		fmt.Fprintf(os.Stderr, "mcpcall: --client must be mcp-go or sdk, not %q\n", *clientName)
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

	srv, err := startServer(*bin, argv)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpcall: starting %s %s: %v\n", *bin, strings.Join(argv, " "), err)
		return 1
	}
	var s session
	if *clientName == "sdk" {
		s, err = connectSDK(ctx, srv)
	} else {
		s, err = connectMCPGo(ctx, srv)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpcall: initialize (%s): %v\n", *clientName, err)
		srv.kill()
		return 1
	}

	outs := make([]output, len(calls))
	errs := make([]error, len(calls))
	do := func(i int) { outs[i], errs[i] = s.call(ctx, calls[i]) }
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
			fmt.Fprintf(os.Stderr, "mcpcall: calling %s (%s): %v\n", calls[i].tool, *clientName, errs[i])
			code = 1
			continue
		}
		if err := enc.Encode(outs[i]); err != nil {
			fmt.Fprintf(os.Stderr, "mcpcall: %v\n", err)
			code = 1
		}
	}
	// Closing the session closes the server's stdin; it must then exit.
	_ = s.close()
	if err := srv.stop(10 * time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "mcpcall: litterbox %s: %v\n", strings.Join(argv, " "), err)
		code = 1
	}
	return code
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// ---------------------------------------------------------------------------
// The server process

type server struct {
	proc   *os.Process
	stdin  *os.File // our end of the server's stdin
	stdout *os.File // our end of the server's stdout
	done   chan struct{}
	state  *os.ProcessState
	err    error
}

// startServer runs bin with argv, its stdin and stdout on pipes and its
// stderr on ours.
func startServer(bin string, argv []string) (*server, error) {
	path, err := lookPath(bin)
	if err != nil {
		return nil, err
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	proc, err := os.StartProcess(path, append([]string{bin}, argv...), &os.ProcAttr{
		Env:   os.Environ(),
		Files: []*os.File{inR, outW, os.Stderr},
	})
	// The child has its own copies of these ends now.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	s := &server{proc: proc, stdin: inW, stdout: outR, done: make(chan struct{})}
	go func() {
		s.state, s.err = proc.Wait()
		close(s.done)
	}()
	return s, nil
}

// lookPath finds bin like a shell would: as given when it holds a slash,
// else in $PATH.
func lookPath(bin string) (string, error) {
	if strings.Contains(bin, "/") {
		return bin, nil
	}
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, bin)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in $PATH", bin)
}

// stop closes the server's stdin and waits for it to exit, killing it after
// grace. It reports a server that had to be killed or exited non-zero.
func (s *server) stop(grace time.Duration) error {
	s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(grace):
		s.kill()
		return fmt.Errorf("did not exit within %s of its stdin closing; killed", grace)
	}
	s.stdout.Close()
	if s.err != nil {
		return s.err
	}
	if !s.state.Success() {
		return errors.New(s.state.String())
	}
	return nil
}

func (s *server) kill() {
	_ = s.proc.Kill()
	<-s.done
	s.stdin.Close()
	s.stdout.Close()
}

// ---------------------------------------------------------------------------
// mcp-go

type mcpGoSession struct{ c *client.Client }

func connectMCPGo(ctx context.Context, srv *server) (session, error) {
	c := client.NewClient(transport.NewIO(srv.stdout, srv.stdin, nil))
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := gomcp.InitializeRequest{}
	init.Params.ProtocolVersion = gomcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = gomcp.Implementation{Name: "litterbox-e2e", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return mcpGoSession{c}, nil
}

func (s mcpGoSession) call(ctx context.Context, c call) (output, error) {
	req := gomcp.CallToolRequest{}
	req.Params.Name = c.tool
	req.Params.Arguments = c.args
	res, err := s.c.CallTool(ctx, req)
	if err != nil {
		return output{}, err
	}
	o := output{Tool: c.tool, IsError: res.IsError, StructuredContent: res.StructuredContent}
	var text []string
	for _, content := range res.Content {
		if t, ok := gomcp.AsTextContent(content); ok {
			text = append(text, t.Text)
		}
	}
	o.Text = strings.Join(text, "\n")
	return o, nil
}

func (s mcpGoSession) close() error { return s.c.Close() }

// ---------------------------------------------------------------------------
// The official go-sdk

type sdkSession struct{ cs *sdk.ClientSession }

func connectSDK(ctx context.Context, srv *server) (session, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: "litterbox-e2e-sdk", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: srv.stdout, Writer: srv.stdin}, nil)
	if err != nil {
		return nil, err
	}
	return sdkSession{cs}, nil
}

func (s sdkSession) call(ctx context.Context, c call) (output, error) {
	res, err := s.cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
	if err != nil {
		return output{}, err
	}
	o := output{Tool: c.tool, IsError: res.IsError, StructuredContent: res.StructuredContent}
	var text []string
	for _, content := range res.Content {
		if t, ok := content.(*sdk.TextContent); ok {
			text = append(text, t.Text)
		}
	}
	o.Text = strings.Join(text, "\n")
	return o, nil
}

func (s sdkSession) close() error { return s.cs.Close() }
