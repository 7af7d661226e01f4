// Package mcpproc runs a `litterbox mcp` server process on pipes for the
// e2e programs and benchmarks (test tools, so os/exec is theirs to use).
package mcpproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	gomcp "github.com/mark3labs/mcp-go/mcp"
)

// Server is a running `litterbox mcp`.
type Server struct {
	cmd    *exec.Cmd
	Stdin  io.WriteCloser // the server's stdin
	Stdout io.ReadCloser  // the server's stdout
	done   chan struct{}
	err    error
}

// Start runs bin (a path, or a name looked up in $PATH) with argv, its
// stdin and stdout on pipes and its stderr on stderr (discarded when nil).
func Start(bin string, argv []string, stderr io.Writer) (*Server, error) {
	cmd := exec.Command(bin, argv...)
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// A pipe of our own rather than StdoutPipe, which Wait closes: the
	// server's last answers stay readable after it exits.
	out, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		return nil, err
	}
	s := &Server{cmd: cmd, Stdin: in, Stdout: out, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// Stop closes the server's stdin and waits for it to exit, killing it after
// grace. It reports a server that had to be killed or exited non-zero.
func (s *Server) Stop(grace time.Duration) error {
	s.Stdin.Close()
	select {
	case <-s.done:
	case <-time.After(grace):
		s.Kill()
		return fmt.Errorf("did not exit within %s of its stdin closing; killed", grace)
	}
	s.Stdout.Close()
	return s.err
}

// Kill stops the server at once.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.done
	s.Stdin.Close()
	s.Stdout.Close()
}

// RSS is the server's resident memory in bytes, from /proc.
func (s *Server) RSS() (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb); err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

// Connect starts an mcp-go client session with the server: initialize with
// clientName, as an agent client would.
func Connect(ctx context.Context, s *Server, clientName string) (*client.Client, error) {
	c := client.NewClient(transport.NewIO(s.Stdout, s.Stdin, nil))
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := gomcp.InitializeRequest{}
	init.Params.ProtocolVersion = gomcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = gomcp.Implementation{Name: clientName, Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
