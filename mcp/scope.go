package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	gomcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Scope is the sandboxes one server may act on: those it created and those
// named when it started, or, with All, every sandbox of the repository. A
// misled agent then cannot reach into another agent's sandbox by name.
type Scope struct {
	All bool

	mu    sync.Mutex
	names map[string]bool
}

// NewScope returns a scope of the named sandboxes (slugs or names that
// make one), or of all of them.
func NewScope(all bool, names []string) (*Scope, error) {
	s := &Scope{All: all, names: map[string]bool{}}
	for _, n := range names {
		slug, err := hostrepo.ParseName(n)
		if err != nil {
			return nil, fmt.Errorf("--sandbox %q: %w", n, err)
		}
		s.names[slug] = true
	}
	return s, nil
}

// allows reports whether the server may act on sandbox slug; a nil scope
// allows everything.
func (s *Scope) allows(slug string) bool {
	if s == nil || s.All {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.names[slug]
}

func (s *Scope) add(slug string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names[slug] = true
}

func (s *Scope) list() []string {
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
func (s *Scope) refusal(slug string) error {
	mine := "none yet"
	if l := s.list(); len(l) > 0 {
		mine = strings.Join(l, ", ")
	}
	return fmt.Errorf("sandbox '%s' is not this server's: it acts on the sandboxes it created and those named with litterbox mcp --sandbox NAME (it has: %s); --all-sandboxes lifts this for an agent that runs several", slug, mine)
}

// notFound is the error for a name no sandbox of the repository has, naming
// only the server's own: the others are not the agent's to reach.
func (s *Scope) notFound(slug string) error {
	if l := s.list(); len(l) > 0 {
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
				if slug, err := hostrepo.ParseName(name); err == nil && !s.allows(slug) {
					if ok, err := known(ctx, slug); err == nil && !ok {
						return errResult(s.notFound(slug)), nil
					}
					return errResult(s.refusal(slug)), nil
				}
			}
			return next(ctx, req)
		}
	}
}
