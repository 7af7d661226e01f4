package sandbox

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/review"
)

// QueueOptions are what a merge queue is asked.
type QueueOptions struct {
	// Check is the shell command run in each sandbox after its sync
	// ([review] check); "" runs none.
	Check string
	// CheckTimeout bounds one check.
	CheckTimeout time.Duration
	// Skip are sandboxes left out with a reason before the queue starts
	// (the CLI's: files that steer this machine, not confirmed).
	Skip map[string]string
	// Tips are the tips the person reviewed, by name; a sandbox missing
	// here is held to its tip when the queue starts. One whose branch
	// moved past it is left: the queue takes nothing unreviewed.
	Tips map[string]string
	// Review is how each merge applies (its streams).
	Review review.Options
	// Each, when set, hears of each sandbox once its turn is over.
	Each func(QueueOutcome)
}

// DefaultCheckTimeout bounds a check that gives no bound of its own.
const DefaultCheckTimeout = 30 * time.Minute

// QueueOutcome is what the queue did with one sandbox.
type QueueOutcome struct {
	Name  string `json:"name"`
	Taken bool   `json:"taken"`
	// Reason says why a sandbox was left as it is.
	Reason string   `json:"reason,omitempty"`
	Synced *Synced  `json:"synced,omitempty"`
	Check  *Checked `json:"check,omitempty"`
	// Commits counts the commits applied; Deleted the branch tip the
	// sandbox's delete left.
	Commits int    `json:"commits,omitempty"`
	Deleted string `json:"deleted,omitempty"`
}

// Checked is how a sandbox's check went.
type Checked struct {
	Command  string        `json:"command"`
	ExitCode int           `json:"exit_code"`
	Took     time.Duration `json:"took_ns"`
	// Tail is the last line of its output, for a failure's reason.
	Tail string `json:"tail,omitempty"`
}

// MergeQueue takes the sandboxes in order onto the current branch: each,
// held to the tip the person reviewed (QueueOptions.Tips), is synced
// onto the branch as the merges before it left it (a sync that
// would conflict changes nothing), its check runs inside it, and it is
// merged (applied, then deleted) only when the check exits 0 and changed
// nothing git tracks; exactly the tip that was checked is taken. One that
// conflicts or fails is left as it is, with the reason, and the queue goes
// on. The error is for what stops the queue itself.
func (m *Manager) MergeQueue(ctx context.Context, names []string, o QueueOptions) ([]QueueOutcome, error) {
	tips := map[string]string{}
	for _, name := range names {
		if tips[name] = o.Tips[name]; tips[name] == "" {
			if _, _, tip, err := m.Repo.BaseAndTip(ctx, name); err == nil {
				tips[name] = tip
			}
		}
	}
	o.Tips = tips
	var out []QueueOutcome
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		q := m.queueOne(ctx, name, o)
		if o.Each != nil {
			o.Each(q)
		}
		out = append(out, q)
	}
	return out, nil
}

// queueOne is one sandbox's turn.
func (m *Manager) queueOne(ctx context.Context, name string, o QueueOptions) QueueOutcome {
	q := QueueOutcome{Name: name}
	if why, ok := o.Skip[name]; ok {
		q.Reason = why
		return q
	}
	s, err := m.Sync(ctx, name, SyncOptions{NoConflicts: true, Tip: o.Tips[name]})
	if err != nil {
		q.Reason = "not synced: " + agenttext.FirstLine(err.Error())
		return q
	}
	q.Synced = s
	if s.Refused {
		q.Reason = fmt.Sprintf("would conflict with %s in %s; nothing changed (litterbox sync %s brings the conflict into the sandbox to resolve)",
			agenttext.Shown(s.OntoName), shownList(s.Conflicts, 5), name)
		return q
	}
	tip := s.To
	if o.Check != "" {
		c, checkedTip, why := m.check(ctx, name, o)
		q.Check = c
		if why != "" {
			q.Reason = why
			return q
		}
		tip = checkedTip
	}
	ro := o.Review
	ro.Tip = tip
	applied, deleted, err := m.Merge(ctx, name, ro)
	if applied != nil {
		q.Commits = applied.Commits
	}
	if err != nil {
		q.Reason = "not merged: " + agenttext.FirstLine(err.Error())
		return q
	}
	q.Taken = true
	if deleted != nil {
		q.Deleted = deleted.BranchTip
	}
	return q
}

// check runs the queue's check in sandbox name and returns how it went,
// the tip it ran on, and why the sandbox is left ("" when it passed).
func (m *Manager) check(ctx context.Context, name string, o QueueOptions) (*Checked, string, string) {
	timeout := o.CheckTimeout
	if timeout <= 0 {
		timeout = DefaultCheckTimeout
	}
	start := time.Now()
	res, err := m.Agent.Bash(ctx, name, agent.BashOptions{Command: o.Check, Timeout: timeout, Kind: "check"})
	c := &Checked{Command: o.Check, Took: time.Since(start)}
	if err != nil {
		return c, "", "check did not run: " + agenttext.FirstLine(err.Error())
	}
	c.ExitCode, c.Tail = res.ExitCode, lastLine(res.Stderr, res.Stdout)
	switch {
	case res.TimedOut:
		return c, "", fmt.Sprintf("check timed out after %v", timeout)
	case res.ExitCode != 0:
		return c, "", fmt.Sprintf("check failed (exit %d): %s", res.ExitCode, agenttext.Shown(c.Tail))
	case res.Between.Commit != "":
		return c, "", fmt.Sprintf("/src changed after the sync, before the check (committed as %s); review it, then merge again", hostrepo.ShortID(res.Between.Commit))
	case res.Snapshot != "":
		return c, "", fmt.Sprintf("the check changed files git tracks (committed as %s); review them, then merge again", hostrepo.ShortID(res.Snapshot))
	}
	_, _, tip, err := m.Repo.BaseAndTip(ctx, name)
	if err != nil {
		return c, "", "not merged: " + agenttext.FirstLine(err.Error())
	}
	return c, tip, ""
}

// lastLine is the last non-empty line of the first stream that has one.
func lastLine(streams ...string) string {
	for _, s := range streams {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
			return agenttext.Elide(l, 200)
		}
	}
	return ""
}

// shownList shows at most n names, inert, and counts the rest.
func shownList(names []string, n int) string {
	shown := make([]string, 0, n+1)
	for _, p := range names[:min(len(names), n)] {
		shown = append(shown, agenttext.Shown(p))
	}
	if len(names) > n {
		shown = append(shown, fmt.Sprintf("and %d more", len(names)-n))
	}
	return strings.Join(shown, ", ")
}
