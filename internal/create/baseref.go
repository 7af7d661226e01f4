package create

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
)

// A base ref is what the user could have typed to start a branch of their
// own: HEAD, a branch, a tag, a remote-tracking branch, or the id of a commit
// reachable from one of those, each optionally walked back with ~N and ^N.
// Everything else git's revision syntax reaches is private to the host
// repository and must not be copied into a sandbox by an agent: the stash
// (stash@{0}^3 holds the user's untracked files), reflogs (@{...}), notes,
// refs/litterbox/* records, :/text searches, and commits no branch holds.
// Remote-tracking branches are allowed: they hold commits the user fetched
// and can start a branch from (`git switch -c x origin/main`), shared with
// everyone who can fetch them, not the host's private state.
// A sandbox's branch, litterbox/<slug>, is a base only when the caller may
// act on that sandbox (an MCP server: its own sandboxes; the CLI: any).

// baseRefNS are the namespaces a base may name, in the order git's
// rev-parse tries a short name (tags before branches before remotes).
var baseRefNS = []string{"refs/tags/", "refs/heads/", "refs/remotes/"}

var (
	walkSuffix = regexp.MustCompile(`^([~^][0-9]*)*$`)
	hexID      = regexp.MustCompile(`^[0-9a-f]{4,64}$`)
)

// baseUsage is what the refusals say may be used.
const baseUsage = "use a branch, a tag, HEAD or a commit id reachable from one, optionally followed by ~N or ^N"

// splitBaseRef cuts ref into the name it starts with and a suffix of ~N/^N
// steps, refusing every other piece of git's revision syntax.
func splitBaseRef(ref string) (name, suffix string, err error) {
	i := strings.IndexAny(ref, "~^")
	if i < 0 {
		i = len(ref)
	}
	name, suffix = ref[:i], ref[i:]
	bad := name == "" || name == "@" || strings.HasPrefix(name, "-") || strings.Contains(name, "..") ||
		strings.ContainsAny(name, ":@{}*?[\\ \t\n") || !walkSuffix.MatchString(suffix)
	for _, r := range name {
		bad = bad || r < 0x20 || r == 0x7f
	}
	if bad {
		return "", "", fmt.Errorf("base ref %q is refused: %s (no stash, reflog @{...}, :/search or other revision syntax)", ref, baseUsage)
	}
	return name, suffix, nil
}

// pickBaseRef finds the full ref a short or full name stands for among
// refs (full names of refs/heads, refs/tags and refs/remotes), as git would
// pick it, and says whether the caller may use it. It returns "" for a name
// that is no such ref (a commit id, or unknown).
func pickBaseRef(name string, refs map[string]bool, maySandbox func(slug string) bool) (string, error) {
	full := ""
	if name == "HEAD" {
		return "HEAD", nil
	}
	if strings.HasPrefix(name, "refs/") {
		if !allowedNS(name) {
			return "", fmt.Errorf("base ref %q is refused: only refs/heads, refs/tags and refs/remotes may be named; %s", name, baseUsage)
		}
		if refs[name] {
			full = name
		}
	} else {
		for _, ns := range baseRefNS {
			if refs[ns+name] {
				full = ns + name
				break
			}
		}
	}
	if slug, ok := strings.CutPrefix(full, "refs/heads/litterbox/"); ok && maySandbox != nil && !maySandbox(slug) {
		return "", fmt.Errorf("base ref %q is refused: it is the branch of sandbox '%s', which this server may not act on; %s, or one of this server's sandboxes", name, slug, baseUsage)
	}
	return full, nil
}

func allowedNS(ref string) bool {
	for _, ns := range baseRefNS {
		if strings.HasPrefix(ref, ns) {
			return true
		}
	}
	return false
}

// resolveBaseRef returns the commit a base ref names after checking it is
// one the user could have typed (see above). maySandbox, when set, limits
// which sandboxes' branches may be named and reached through.
func (m *Creator) resolveBaseRef(ctx context.Context, ref string, maySandbox func(slug string) bool) (string, error) {
	name, suffix, err := splitBaseRef(ref)
	if err != nil {
		return "", err
	}
	all, err := m.Repo.Git.ListRefs(ctx, "refs/heads/", "refs/tags/", "refs/remotes/")
	if err != nil {
		return "", err
	}
	refs := map[string]bool{}
	for _, r := range all {
		refs[r.Name] = true
	}
	full, err := pickBaseRef(name, refs, maySandbox)
	if err != nil {
		return "", err
	}
	unknown := fmt.Errorf("base ref %q is not a commit in this repository; %s", ref, baseUsage)
	if full == "" && !hexID.MatchString(strings.ToLower(name)) {
		return "", unknown
	}
	rev := name + suffix
	if full != "" {
		rev = full + suffix // exactly the ref checked, whatever else shares its short name
	}
	commit, err := m.Repo.Git.ResolveCommit(ctx, rev)
	if errors.Is(err, gitcli.ErrUnknownRevision) {
		return "", unknown
	}
	if err != nil || full != "" {
		return commit, err
	}
	return commit, m.reachable(ctx, ref, commit, maySandbox)
}

// reachable refuses a commit named by id unless a branch, tag or
// remote-tracking branch the caller may use contains it.
func (m *Creator) reachable(ctx context.Context, ref, commit string, maySandbox func(slug string) bool) error {
	out, err := m.Repo.Git.Output(ctx, "for-each-ref", "--format=%(refname)", "--contains", commit, "refs/heads/", "refs/tags/", "refs/remotes/")
	if err != nil {
		return err
	}
	for _, r := range strings.Fields(out) {
		slug, isBox := strings.CutPrefix(r, "refs/heads/litterbox/")
		if !isBox || maySandbox == nil || maySandbox(slug) {
			return nil
		}
	}
	return fmt.Errorf("base ref %q is refused: commit %s is on no branch or tag you may use (a stash, a reflog entry or a dangling commit); %s", ref, hostrepo.ShortID(commit), baseUsage)
}

// createBase is the commit a new sandbox starts from: HEAD, or the checked
// base ref.
func (m *Creator) createBase(ctx context.Context, opts CreateOptions) (string, error) {
	if opts.BaseRef != "" {
		return m.resolveBaseRef(ctx, opts.BaseRef, opts.MayBaseOn)
	}
	base, err := m.Repo.Git.ResolveCommit(ctx, "HEAD")
	if errors.Is(err, gitcli.ErrUnknownRevision) {
		return "", fmt.Errorf("the repository has no commits yet; commit something first, since only commits reach a sandbox")
	}
	return base, err
}
