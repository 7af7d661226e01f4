package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// Scope is the sandboxes one server may act on: those its client made
// (with this server or one before it), those named when it started, or,
// with All, every sandbox of the repository. A misled agent then cannot
// reach into another agent's sandbox by name, and a client whose server
// is started again keeps its sandboxes.
type Scope struct {
	All bool
	// Client is the client's identity as litterbox mcp --client gave it;
	// "" takes the name the client gives in its handshake.
	Client string
	// Review: the server reviews its one named sandbox (litterbox mcp
	// --review): it offers and runs only the tools that read, and
	// sandbox-review for its findings, and no sandbox of its client's
	// joins the scope.
	Review bool

	// clients are the repository's sandboxes, each with the client its
	// record names ("" for a person's); bound by New.
	clients func() map[string]string

	mu    sync.Mutex
	names map[string]bool
}

// NewScope returns a scope of the named sandboxes (slugs or names that
// make one) and those of client, or of all of them.
func NewScope(all bool, names []string, client string) (*Scope, error) {
	s := &Scope{All: all, Client: agenttext.Cap(strings.TrimSpace(client), maxClient), names: map[string]bool{}}
	for _, n := range names {
		slug, err := hostrepo.ParseName(n)
		if err != nil {
			return nil, fmt.Errorf("--sandbox %q: %w", n, err)
		}
		s.names[slug] = true
	}
	return s, nil
}

// NewReviewScope returns the scope of a reviewer of sandbox name alone.
func NewReviewScope(name, client string) (*Scope, error) {
	s, err := NewScope(false, []string{name}, client)
	if err != nil {
		return nil, err
	}
	s.Review = true
	return s, nil
}

// reviewing reports whether the server is a reviewer's.
func (s *Scope) reviewing() bool { return s != nil && s.Review }

// maxClient bounds a client's name as records and the audit log keep it.
const maxClient = 100

// clientOf is the identity of the client whose call ctx is: the scope's
// Client, else the name its handshake gave ("" when it gave none).
func (s *Scope) clientOf(ctx context.Context) string {
	if s != nil && s.Client != "" {
		return s.Client
	}
	if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		return agenttext.Cap(strings.TrimSpace(cs.GetClientInfo().Name), maxClient)
	}
	return ""
}

// allows reports whether the server may act on sandbox slug in the call
// of ctx; a nil scope allows everything.
func (s *Scope) allows(ctx context.Context, slug string) bool {
	if s == nil || s.All {
		return true
	}
	s.mu.Lock()
	named := s.names[slug]
	s.mu.Unlock()
	if named || s.Review {
		return named
	}
	if c := s.clientOf(ctx); c != "" && s.clients != nil && s.clients()[slug] == c {
		s.add(slug)
		return true
	}
	return false
}

// takeUp adds to the scope every sandbox its client made, so that a
// server started again lists them as its own.
func (s *Scope) takeUp(ctx context.Context) {
	c := s.clientOf(ctx)
	if c == "" || s.clients == nil || s.Review {
		return
	}
	for slug, owner := range s.clients() {
		if owner == c {
			s.add(slug)
		}
	}
}

func (s *Scope) add(slug string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[slug] = true
}

// list is the scope's sandboxes by name, those its client made included.
func (s *Scope) list(ctx context.Context) []string {
	s.takeUp(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.names))
	for n := range s.names {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// refusal explains a sandbox out of scope.
func (s *Scope) refusal(ctx context.Context, slug string) error {
	mine := "none yet"
	if l := s.list(ctx); len(l) > 0 {
		mine = strings.Join(l, ", ")
	}
	whose := "the sandboxes its client made"
	if c := s.clientOf(ctx); c != "" {
		whose = fmt.Sprintf("the sandboxes its client (%s) made", c)
	}
	return fmt.Errorf("sandbox '%s' is not this server's: it acts on %s and those named with litterbox mcp --sandbox NAME (it has: %s); --all-sandboxes lifts this for an agent that runs several", slug, whose, mine)
}

// notFound is the error for a name no sandbox of the repository has, naming
// only the server's own: the others are not the agent's to reach.
func (s *Scope) notFound(ctx context.Context, slug string) error {
	if l := s.list(ctx); len(l) > 0 {
		return fmt.Errorf("sandbox '%s' not found: this server's sandboxes are %s", slug, strings.Join(l, ", "))
	}
	return fmt.Errorf("sandbox '%s' not found: this server has no sandboxes yet (sandbox-create makes one)", slug)
}

// scopeMiddleware refuses a call on a sandbox out of scope before the tool
// sees it: as not found when the repository has no sandbox of that name
// (known tells, from its records and branches), so a typo reads as one.
func scopeMiddleware(s *Scope, known func(context.Context, string) (bool, error)) server.ToolHandlerMiddleware {
	return func(next server.ToolHandlerFunc) server.ToolHandlerFunc {
		return func(ctx context.Context, req gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
			if name, ok := req.GetArguments()["sandbox"].(string); ok {
				if slug, err := hostrepo.ParseName(name); err == nil && !s.allows(ctx, slug) {
					if ok, err := known(ctx, slug); err == nil && !ok {
						return errResult(s.notFound(ctx, slug)), nil
					}
					return errResult(s.refusal(ctx, slug)), nil
				}
			}
			return next(ctx, req)
		}
	}
}
