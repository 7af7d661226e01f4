package review

import (
	"context"
	"fmt"
	"strings"

	"github.com/litterbox-dev/litterbox/gitcli"
)

// entry is a path's state on one side of a change: mode and object id;
// mode "000000" for a path that is not there.
type entry struct{ Mode, ID string }

// checkOutcome is the rule an apply's result must meet. reviewed is the
// reviewed change (from..tip: each changed path's state at the tip),
// drifted the paths the host's HEAD had changed since from, and applied
// the change the apply made to the host (saved HEAD..result: each changed
// path's new state). The rule:
//
//  1. applied changes only paths the reviewed change changes: nothing else
//     (no file a message or anything else could smuggle in) reaches the
//     host.
//  2. every reviewed path the host had left as it was at from ends exactly
//     as at the tip, same object and same mode: the human took what they
//     reviewed, no more and no less.
//
// A path both sides changed is a merge whose result is git's (and the
// user's, on a conflict); rule 1 still holds for it.
func checkOutcome(reviewed map[string]entry, drifted map[string]bool, applied map[string]entry) error {
	for p := range applied {
		if _, ok := reviewed[p]; !ok {
			return fmt.Errorf("it changed %q, which the reviewed commits do not change", p)
		}
	}
	for p, want := range reviewed {
		if drifted[p] {
			continue
		}
		if got, ok := applied[p]; !ok || got != want {
			return fmt.Errorf("%q is not as in the reviewed commits", p)
		}
	}
	return nil
}

// Verify checks that the host's change since saved (its HEAD, or with
// squash its index) is exactly the reviewed change from..tip by the rule of
// checkOutcome, and otherwise undoes it: back to saved, keeping the user's
// other uncommitted work (reset --keep, or --merge for the staged squash).
func Verify(ctx context.Context, g *gitcli.Client, from, tip, saved string, squash bool) error {
	g = Sealed(g)
	bad, err := outcome(ctx, g, from, tip, saved, squash)
	switch {
	case err != nil:
		// Fail closed: an outcome that cannot be checked is not kept.
		bad = fmt.Errorf("its outcome could not be checked (%v)", err)
	case bad == nil:
		return nil
	}
	return undo(ctx, g, saved, squash, fmt.Errorf("not applied: %w", bad))
}

// undo puts the branch, index and work tree back at saved after an apply
// that is not to be kept, keeping the user's other uncommitted work (reset
// --keep, or --merge for the staged squash), and returns why with where
// things are now.
func undo(ctx context.Context, g *gitcli.Client, saved string, squash bool, why error) error {
	mode := "--keep"
	if squash {
		mode = "--merge"
	}
	// The undo runs even when the caller gave up (a cancelled context).
	if _, err := g.Output(context.WithoutCancel(ctx), "reset", "-q", mode, saved); err != nil {
		return fmt.Errorf("%v; restoring your branch failed (%v): run git reset %s %s", why, err, mode, saved)
	}
	return fmt.Errorf("%w; your branch, index and work tree are back at %s", why, abbrev(saved))
}

// outcome returns the rule's verdict (nil when met), or err when git could
// not tell.
func outcome(ctx context.Context, g *gitcli.Client, from, tip, saved string, squash bool) (bad, err error) {
	reviewed, err := rawDiff(ctx, g, "diff-tree", "-r", "-z", "--no-renames", from, tip)
	if err != nil {
		return nil, err
	}
	host, err := rawDiff(ctx, g, "diff-tree", "-r", "-z", "--no-renames", from, saved)
	if err != nil {
		return nil, err
	}
	drifted := make(map[string]bool, len(host))
	for p := range host {
		drifted[p] = true
	}
	var applied map[string]entry
	if squash {
		applied, err = rawDiff(ctx, g, "diff-index", "--cached", "-z", "--no-renames", saved)
	} else {
		applied, err = rawDiff(ctx, g, "diff-tree", "-r", "-z", "--no-renames", saved, "HEAD")
	}
	if err != nil {
		return nil, err
	}
	return checkOutcome(reviewed, drifted, applied), nil
}

// rawDiff runs a raw-format diff command (-z) and returns each changed
// path's new state.
func rawDiff(ctx context.Context, g *gitcli.Client, args ...string) (map[string]entry, error) {
	out, err := g.Output(ctx, args...)
	if err != nil {
		return nil, err
	}
	return parseRaw(out)
}

// parseRaw reads git's -z raw diff: ":oldmode newmode oldid newid status",
// NUL, path, NUL per change (no renames or copies).
func parseRaw(out string) (map[string]entry, error) {
	m := map[string]entry{}
	f := strings.Split(strings.TrimSuffix(out, "\x00"), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(meta) != 5 {
			return nil, fmt.Errorf("unexpected line in git's raw diff: %q", f[i])
		}
		m[f[i+1]] = entry{Mode: meta[1], ID: meta[3]}
	}
	return m, nil
}
