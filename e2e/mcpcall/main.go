// Command mcpcall is the e2e tests' MCP client: it launches `litterbox mcp`
// over stdio, initializes a session, calls tools and prints each
// CallToolResult as one JSON line on stdout:
//
//	{"tool":"sandbox-create","isError":false,"structuredContent":{...},"text":"..."}
//
// Usage:
//
//	mcpcall [--client mcp-go|sdk] [--as NAME] [--client-id NAME] [--bin LITTERBOX] [--repo DIR] [--scope all|own|review:NAME|NAMES] [-v] [--parallel] [--timeout D]
//	        [--cancel-after D] [--progress] TOOL ARGS_JSON [TOOL ARGS_JSON ...]
//
// --cancel-after gives up on each call after D, as a client whose user
// pressed stop: the library sends notifications/cancelled and mcpcall prints
// {"tool":...,"cancelled":true}. --progress (mcp-go) sends a progressToken
// with each call and prints every notifications/progress as a line
// {"progress":N,"message":"..."} before the call's result.
//
// --client picks the MCP client library: mcp-go (github.com/mark3labs/mcp-go,
// the default, also $MCPCALL_CLIENT) or sdk (the official
// github.com/modelcontextprotocol/go-sdk). Both talk to the same server
// process, which mcpcall starts itself (internal/mcpproc) on plain pipes.
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
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	gomcp "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/litterbox-dev/litterbox/internal/mcpproc"
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
	// Images are the image contents, by type and decoded size.
	Images    []image `json:"images,omitempty"`
	Cancelled bool    `json:"cancelled,omitempty"`
}

type image struct {
	MIME  string `json:"mime"`
	Bytes int    `json:"bytes"`
}

// Set by flags for every call.
var (
	cancelAfter time.Duration
	progress    bool
)

// session is one initialized MCP client session, whichever library made it.
type session interface {
	call(ctx context.Context, c call) (output, error)
	// outputSchemas are the tools' output schemas as tools/list gives them.
	outputSchemas(ctx context.Context) (map[string]any, error)
	close() error
}

func main() {
	os.Exit(run())
}

// as is the client name the handshake sends (--as).
var as string

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func run() int {
	fs := flag.NewFlagSet("mcpcall", flag.ContinueOnError)
	clientName := fs.String("client", envOr("MCPCALL_CLIENT", "mcp-go"), "MCP client library: mcp-go or sdk")
	clientID := fs.String("client-id", "", "pass --client NAME to litterbox mcp")
	fs.StringVar(&as, "as", "", "the client name sent in the handshake (default litterbox-e2e, or litterbox-e2e-sdk for sdk)")
	bin := fs.String("bin", os.Getenv("LITTERBOX"), "litterbox binary (default $LITTERBOX, else litterbox on PATH)")
	repo := fs.String("repo", "", "repository passed to litterbox mcp --repo")
	verbose := fs.Bool("v", false, "run litterbox -v mcp")
	parallel := fs.Bool("parallel", false, "make the calls concurrently")
	scope := fs.String("scope", "all", `the server's sandboxes: "all" (--all-sandboxes), "own" (those it creates), "review:NAME" (--review NAME), or names, comma-separated (--sandbox each)`)
	timeout := fs.Duration("timeout", 2*time.Minute, "overall time limit")
	fs.DurationVar(&cancelAfter, "cancel-after", 0, "give up on each call after this long (notifications/cancelled)")
	fs.BoolVar(&progress, "progress", false, "ask for progress notifications and print them (mcp-go)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) == 0 || len(rest)%2 != 0 {
		fmt.Fprintln(os.Stderr, "usage: mcpcall [--client mcp-go|sdk] [--as NAME] [--client-id NAME] [--bin B] [--repo DIR] [--scope all|own|review:NAME|NAMES] [-v] [--parallel] [--timeout D] TOOL ARGS_JSON [TOOL ARGS_JSON ...]")
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
	argv := serverArgv(*verbose, *repo, *clientID, *scope)

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	srv, err := mcpproc.Start(*bin, argv, os.Stderr)
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
		srv.Kill()
		return 1
	}

	outs, errs := makeCalls(ctx, s, calls, *parallel)

	code := 0
	schemas, err := compileSchemas(ctx, s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpcall: output schemas (%s): %v\n", *clientName, err)
		code = 1
	}
	enc := json.NewEncoder(os.Stdout)
	for i := range calls {
		if errs[i] != nil {
			fmt.Fprintf(os.Stderr, "mcpcall: calling %s (%s): %v\n", calls[i].tool, *clientName, errs[i])
			code = 1
			continue
		}
		if err := checkOutput(schemas, outs[i]); err != nil {
			fmt.Fprintf(os.Stderr, "mcpcall: %s (%s): %v\n", calls[i].tool, *clientName, err)
			code = 1
		}
		if err := enc.Encode(outs[i]); err != nil {
			fmt.Fprintf(os.Stderr, "mcpcall: %v\n", err)
			code = 1
		}
	}
	// Closing the session closes the server's stdin; it must then exit.
	_ = s.close()
	if err := srv.Stop(10 * time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "mcpcall: litterbox %s: %v\n", strings.Join(argv, " "), err)
		code = 1
	}
	return code
}

// serverArgv is litterbox's argv for the server mcpcall starts.
func serverArgv(verbose bool, repo, clientID, scope string) []string {
	var argv []string
	if verbose {
		argv = append(argv, "-v")
	}
	argv = append(argv, "mcp")
	if repo != "" {
		argv = append(argv, "--repo", repo)
	}
	if clientID != "" {
		argv = append(argv, "--client", clientID)
	}
	switch scope {
	case "all":
		argv = append(argv, "--all-sandboxes")
	case "own":
	default:
		if name, ok := strings.CutPrefix(scope, "review:"); ok {
			return append(argv, "--review", name)
		}
		for _, n := range strings.Split(scope, ",") {
			argv = append(argv, "--sandbox", n)
		}
	}
	return argv
}

// makeCalls makes the calls in order, or all at once, and returns each
// one's output and error; a call given up on (--cancel-after) is an
// output marked cancelled.
func makeCalls(ctx context.Context, s session, calls []call, parallel bool) ([]output, []error) {
	outs := make([]output, len(calls))
	errs := make([]error, len(calls))
	do := func(i int) {
		cctx, stop := ctx, context.CancelFunc(func() {})
		if cancelAfter > 0 {
			cctx, stop = context.WithTimeout(ctx, cancelAfter)
		}
		defer stop()
		outs[i], errs[i] = s.call(cctx, calls[i])
		if errs[i] != nil && cctx.Err() != nil && ctx.Err() == nil {
			outs[i], errs[i] = output{Tool: calls[i].tool, Cancelled: true}, nil
		}
	}
	if !parallel {
		for i := range calls {
			do(i)
		}
		return outs, errs
	}
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() { defer wg.Done(); do(i) }()
	}
	wg.Wait()
	return outs, errs
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// ---------------------------------------------------------------------------
// mcp-go

type mcpGoSession struct{ c *client.Client }

func connectMCPGo(ctx context.Context, srv *mcpproc.Server) (session, error) {
	c, err := mcpproc.Connect(ctx, srv, orDefault(as, "litterbox-e2e"))
	if err != nil {
		return nil, err
	}
	if progress {
		var mu sync.Mutex
		enc := json.NewEncoder(os.Stdout)
		c.OnNotification(func(n gomcp.JSONRPCNotification) {
			if n.Method != string(gomcp.MethodNotificationProgress) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			_ = enc.Encode(map[string]any{"progress": n.Params.AdditionalFields["progress"], "message": n.Params.AdditionalFields["message"]})
		})
	}
	return mcpGoSession{c}, nil
}

func (s mcpGoSession) call(ctx context.Context, c call) (output, error) {
	req := gomcp.CallToolRequest{}
	req.Params.Name = c.tool
	req.Params.Arguments = c.args
	if progress {
		req.Params.Meta = &gomcp.Meta{ProgressToken: "mcpcall"}
	}
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
		if img, ok := gomcp.AsImageContent(content); ok {
			data, err := base64.StdEncoding.DecodeString(img.Data)
			if err != nil {
				return output{}, fmt.Errorf("image content: %w", err)
			}
			o.Images = append(o.Images, image{MIME: img.MIMEType, Bytes: len(data)})
		}
	}
	o.Text = strings.Join(text, "\n")
	return o, nil
}

func (s mcpGoSession) close() error { return s.c.Close() }

func (s mcpGoSession) outputSchemas(ctx context.Context) (map[string]any, error) {
	res, err := s.c.ListTools(ctx, gomcp.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, t := range res.Tools {
		if out[t.Name], err = asJSON(t.OutputSchema); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return out, nil
}

// asJSON is v as the schema validator reads it: through JSON, as it came,
// whatever type the client library holds it in.
func asJSON(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	return out, json.Unmarshal(raw, &out)
}

// ---------------------------------------------------------------------------
// The official go-sdk

type sdkSession struct{ cs *sdk.ClientSession }

func connectSDK(ctx context.Context, srv *mcpproc.Server) (session, error) {
	c := sdk.NewClient(&sdk.Implementation{Name: orDefault(as, "litterbox-e2e-sdk"), Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: srv.Stdout, Writer: srv.Stdin}, nil)
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
		if img, ok := content.(*sdk.ImageContent); ok {
			o.Images = append(o.Images, image{MIME: img.MIMEType, Bytes: len(img.Data)})
		}
	}
	o.Text = strings.Join(text, "\n")
	return o, nil
}

func (s sdkSession) close() error { return s.cs.Close() }

func (s sdkSession) outputSchemas(ctx context.Context) (map[string]any, error) {
	res, err := s.cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, t := range res.Tools {
		if out[t.Name], err = asJSON(t.OutputSchema); err != nil {
			return nil, fmt.Errorf("%s: %w", t.Name, err)
		}
	}
	return out, nil
}
