package reviewcmd

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/review"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
)

// runQueue merges names in order as a merge queue: each synced onto the
// branch as the merges before left it, its [review] check run inside it,
// and taken only when that passes. One line a sandbox, then what was taken
// and what was left; the error (exit 1) when any was left.
func runQueue(ctx context.Context, e *cli.Env, m *sandbox.Manager, names []string, o applyOptions) error {
	if o.Squash || len(o.Extra) > 0 {
		return cli.Usagef("merge of several sandboxes (a queue) takes neither --squash nor git arguments; merge them one by one for that")
	}
	skip, tips := steeringSkips(ctx, e, m, names, o.Yes)
	check := m.Repo.Config.ReviewCheck
	head, _ := m.Repo.Git.Output(ctx, "rev-parse", "--abbrev-ref", "HEAD")
	what := "no check ([review] check is not set)"
	if check != "" {
		what = "check: " + agenttext.Shown(check)
	}
	fmt.Fprintf(e.Stdout, "Merge queue of %d sandbox(es) onto %s, %s.\n", len(names), agenttext.Shown(head), what)
	outcomes, err := m.MergeQueue(ctx, names, sandbox.QueueOptions{
		Check: check, Skip: skip, Tips: tips,
		// git's own account of each pick adds nothing to the queue's line.
		Review: review.Options{Stdout: io.Discard, Stderr: e.Stderr},
		Each:   func(q sandbox.QueueOutcome) { fmt.Fprintln(e.Stdout, queueLine(q)) },
	})
	var taken, left []string
	for _, q := range outcomes {
		if q.Taken {
			taken = append(taken, q.Name)
		} else {
			left = append(left, q.Name)
		}
	}
	fmt.Fprintf(e.Stdout, "Taken: %s. Left: %s.\n", listOrNone(taken), listOrNone(left))
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("merge queue left %d of %d sandbox(es): %s", len(left), len(names), strings.Join(left, ", "))
	}
	return nil
}

// steeringSkips leaves out, with the reason, each sandbox whose branch
// changes files that steer this machine, unless --yes or a person on a
// terminal says yes to it; and returns the tips it looked at, which the
// queue takes and nothing past them.
func steeringSkips(ctx context.Context, e *cli.Env, m *sandbox.Manager, names []string, yes bool) (skip, tips map[string]string) {
	skip, tips = map[string]string{}, map[string]string{}
	for _, name := range names {
		cs, tip, err := m.ControlChanges(ctx, name)
		if err != nil {
			skip[name] = "not merged: " + agenttext.FirstLine(err.Error())
			continue
		}
		tips[name] = tip
		if len(cs) == 0 || yes {
			continue
		}
		warnChanges(e, cs)
		if err := confirmMerge(e, name, cs); err != nil {
			skip[name] = agenttext.FirstLine(err.Error())
		}
	}
	return skip, tips
}

// queueLine says in one line what the queue did with one sandbox.
func queueLine(q sandbox.QueueOutcome) string {
	var parts []string
	if s := q.Synced; s != nil && !s.Refused {
		if s.UpToDate {
			parts = append(parts, "already on "+agenttext.Shown(s.OntoName))
		} else {
			parts = append(parts, fmt.Sprintf("synced (%d commit(s) replayed)", s.Replayed))
		}
	}
	if c := q.Check; c != nil && c.ExitCode == 0 && q.Reason == "" {
		parts = append(parts, fmt.Sprintf("check passed in %s", c.Took.Round(100*time.Millisecond)))
	}
	if !q.Taken {
		parts = append(parts, "left: "+q.Reason)
		return q.Name + ": " + strings.Join(parts, "; ")
	}
	parts = append(parts, fmt.Sprintf("applied %d commit(s)", q.Commits))
	if q.Deleted != "" {
		parts = append(parts, "deleted (its branch was at "+hostrepo.ShortID(q.Deleted)+")")
	}
	return q.Name + ": taken: " + strings.Join(parts, "; ")
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
