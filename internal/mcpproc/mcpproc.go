// Package mcpproc runs a `litterbox mcp` server process on plain pipes for
// the e2e programs, with os.StartProcess: only runner/ may import os/exec.
package mcpproc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	gomcp "github.com/mark3labs/mcp-go/mcp"
)

type Server struct {
	Proc   *os.Process
	Stdin  *os.File // our end of the server's stdin
	Stdout *os.File // our end of the server's stdout
	done   chan struct{}
	state  *os.ProcessState
	err    error
}

// Start runs bin with argv, its stdin and stdout on pipes and its stderr on
// stderr.
func Start(bin string, argv []string, stderr *os.File) (*Server, error) {
	path, err := LookPath(bin)
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
		Files: []*os.File{inR, outW, stderr},
	})
	// The child has its own copies of these ends now.
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	s := &Server{Proc: proc, Stdin: inW, Stdout: outR, done: make(chan struct{})}
	go func() {
		s.state, s.err = proc.Wait()
		close(s.done)
	}()
	return s, nil
}

// LookPath finds bin like a shell would: as given when it holds a slash,
// else in $PATH.
func LookPath(bin string) (string, error) {
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
	if s.err != nil {
		return s.err
	}
	if !s.state.Success() {
		return errors.New(s.state.String())
	}
	return nil
}

// Kill stops the server at once.
func (s *Server) Kill() {
	_ = s.Proc.Kill()
	<-s.done
	s.Stdin.Close()
	s.Stdout.Close()
}

// RSS is the server's resident memory in bytes, from /proc.
func (s *Server) RSS() (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.Proc.Pid))
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
