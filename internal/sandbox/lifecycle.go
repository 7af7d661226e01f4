package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agent"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/create"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/hostrepo"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/ports"
	"github.com/litterbox-dev/litterbox/internal/servicectl"

	"github.com/litterbox-dev/litterbox/internal/config"
	"github.com/litterbox-dev/litterbox/internal/forecast"
)

// Info is one sandbox as list shows it.
type Info struct {
	Name      string       `json:"name"`
	Status    string       `json:"status"`
	Branch    string       `json:"branch"`
	Container string       `json:"container"`
	Base      string       `json:"base,omitempty"`
	Repo      string       `json:"repo"`
	Created   string       `json:"created,omitempty"`
	Ports     []ports.Port `json:"ports"`
	// RepoGone is set for a sandbox whose repository no longer exists at
	// Repo (moved or deleted); `litterbox --repo REPO delete NAME` removes it.
	RepoGone bool `json:"repo_gone,omitempty"`
	// CommitsAhead counts the branch's commits over the base; nil when it
	// cannot be known (no branch, or a sandbox of another repository).
	CommitsAhead *int `json:"commits_ahead"`
	// Allow is the allowlist of a sandbox with network mode "allow", and
	// Refused counts what its egress proxy refused, by host:port: what
	// the agent tried to reach.
	Allow   []string       `json:"allow,omitempty"`
	Refused map[string]int `json:"refused,omitempty"`
	// Background names the commands the agent started with bash's
	// background (services of its own; sandbox-service tells their state).
	Background []string `json:"background,omitempty"`
	// Limits are the sandbox's CPUs, memory, processes and idle stop, as
	// its container's label keeps them (none for an older sandbox's).
	Limits *create.Limits `json:"limits,omitempty"`
	// Isolation is "gvisor" for a sandbox under gVisor, else "container"
	// (or empty, for a sandbox of another repository or an older record).
	Isolation string `json:"isolation,omitempty"`
	// Agent is the `litterbox run` session running in the sandbox, if one
	// is: its command, since when, and the host process that holds it.
	Agent *RunSession `json:"agent,omitempty"`
	// Owner is who drives the sandbox (nil: nobody now), Call the call
	// running in it, and LastActivity when its last call ended (zero
	// when none has run). Known for this repository's sandboxes only.
	Owner        *Owner    `json:"owner,omitempty"`
	Call         *Call     `json:"call,omitempty"`
	LastActivity time.Time `json:"last_activity,omitzero"`
	// Review is where the work stands in the review loop (working, ready,
	// rejected, taken) with the latest summary or reason; this
	// repository's sandboxes with a branch only.
	Review *Review `json:"review,omitempty"`
	// Forecast is how the work would meet the host's HEAD and the other
	// sandboxes' work, when Forecast was asked (list does).
	Forecast *forecast.Forecast `json:"forecast,omitempty"`
	// ours: the sandbox is this repository's (another repository may
	// have had the same path). tip is its branch's tip, when it has one.
	ours bool
	tip  string
}

// RunSession is a `litterbox run` session as list shows it.
type RunSession struct {
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
	PID     int       `json:"pid"`
}

// sessionOf is the run session live in sandbox slug, nil when none is.
func (m *Manager) sessionOf(slug string) *RunSession {
	h := layout.Session(m.Repo.Layout().Session(slug))
	if h == nil {
		return nil
	}
	return &RunSession{Command: strings.TrimPrefix(h.Call, agent.RunKind+": "), Since: h.Since, PID: h.PID}
}

var listLabels = []string{hostrepo.LabelRepo, hostrepo.LabelRepoID, hostrepo.LabelRepoSlug, hostrepo.LabelSandbox, hostrepo.LabelBase, create.LabelPorts, create.LabelLimits}

// baseOf is a sandbox's base commit: its record's, which a sync moves,
// else its container's label (a sandbox this repository has no record
// of).
func baseOf(labels map[string]string, rec *layout.Record) string {
	if rec != nil && rec.Base != "" {
		return rec.Base
	}
	return labels[hostrepo.LabelBase]
}

// createdOf is when a sandbox was made: its container's creation, or the
// record's for one claimed from a warm pool, whose container is older.
func createdOf(container string, rec *layout.Record) string {
	if rec != nil && rec.Pool != "" {
		return rec.Created.Format("2006-01-02 15:04:05 -0700 MST")
	}
	return container
}

func statusOf(state box.State, rec *layout.Record) string {
	if rec != nil && rec.Status == layout.Creating && hostrepo.ProcessAlive(rec.CreatorPID) {
		return create.StatusCreating
	}
	switch state {
	case "paused":
		return create.StatusPaused
	case "running":
		if rec != nil && rec.Status == layout.FailedSetup {
			return create.StatusFailedSetup
		}
		return create.StatusActive
	case "exited", "created":
		return create.StatusStopped
	}
	return create.StatusError
}

// idleOr is create.StatusIdle for a stopped sandbox whose PID 1 ended it for
// being idle, as the engine's status line says ("Exited (75) 2 minutes
// ago"), else status.
func idleOr(status, detail string) string {
	if status == create.StatusStopped && strings.HasPrefix(detail, fmt.Sprintf("Exited (%d)", protocol.IdleExit)) {
		return create.StatusIdle
	}
	return status
}

// List returns the sandboxes of this repository (of every repository with
// allRepos) from one `docker ps` plus git and the state files.
func (m *Manager) List(ctx context.Context, allRepos bool) ([]Info, error) {
	// Every managed container, then ownership by label: a filter on the
	// repository label would miss those an older release labelled with a
	// linked worktree's root.
	cts, err := m.Repo.Provider.List(ctx, map[string]string{hostrepo.LabelManaged: "true"}, listLabels)
	if err != nil {
		return nil, err
	}
	recs := m.Repo.Store().All()
	refs, err := m.Repo.Git.ListRefs(ctx, "refs/heads/litterbox/")
	if err != nil {
		return nil, err
	}
	var out []Info
	seen := map[string]bool{}
	for _, c := range cts {
		slug, repo := hostrepo.SlugOf(c.Name, c.Labels), c.Labels[hostrepo.LabelRepo]
		if slug == "" {
			continue // a warm pool's entry, no sandbox yet
		}
		var rec *layout.Record
		ours := m.Repo.Owns(ctx, c.Name, c.Labels)
		switch {
		case ours:
			rec, repo = recs[slug], m.Repo.RepoPath
			seen[slug] = true
		case !allRepos:
			continue
		}
		out = append(out, Info{
			ours: ours, RepoGone: !ours && hostrepo.Gone(repo),
			Name: slug, Status: idleOr(statusOf(c.State, rec), c.Status), Branch: "litterbox/" + slug,
			Container: c.Name, Base: baseOf(c.Labels, rec), Repo: repo, Created: createdOf(c.Created, rec), Ports: ports.ParseLabel(c.Labels[create.LabelPorts]),
			Background: servicectl.BackgroundOf(rec), Limits: create.ParseLimits(c.Labels),
		})
	}
	// Branches and records with no container: the container was removed
	// behind our back.
	for _, r := range refs {
		slug := strings.TrimPrefix(r.Name, "refs/heads/litterbox/")
		if !seen[slug] && (recs[slug] != nil || hostrepo.ParseNameExact(slug)) {
			seen[slug] = true
			out = append(out, m.missingInfo(slug, recs[slug]))
		}
	}
	for slug, rec := range recs {
		if !seen[slug] {
			out = append(out, m.missingInfo(slug, rec))
		}
	}
	slices.SortFunc(out, func(a, b Info) int {
		return strings.Compare(a.Repo+"\x00"+a.Name, b.Repo+"\x00"+b.Name)
	})
	tips := map[string]string{}
	for _, r := range refs {
		tips[strings.TrimPrefix(r.Name, "refs/heads/litterbox/")] = r.ID
	}
	for i := range out {
		s := &out[i]
		if s.ours {
			m.readActivity(s)
		}
		tip, ok := tips[s.Name]
		if s.ours && ok {
			s.tip, s.Review = tip, m.reviewOf(s.Name, tip)
		}
		if !s.ours || !ok || s.Base == "" {
			continue
		}
		if rec := recs[s.Name]; rec != nil && rec.Allow != nil {
			s.Allow = rec.Allow
			s.Refused, _ = m.Proxies().Refusals(ctx, s.Name, time.Time{})
		}
		if rec := recs[s.Name]; rec != nil && rec.Isolation != "" {
			s.Isolation = rec.Isolation
		}
		if n, err := m.Repo.CommitsAhead(ctx, s.Name, s.Base, tip); err == nil {
			s.CommitsAhead = &n
		}
	}
	return out, nil
}

func (m *Manager) missingInfo(slug string, rec *layout.Record) Info {
	n := m.Repo.Names(slug)
	info := Info{Name: slug, Status: create.StatusMissing, Branch: n.Branch, Container: n.Container, Repo: m.Repo.RepoPath, Ports: []ports.Port{}, ours: true}
	if rec != nil && rec.Ports != nil {
		info.Ports = rec.Ports
	}
	if rec != nil && rec.Status == layout.Creating && hostrepo.ProcessAlive(rec.CreatorPID) {
		info.Status = create.StatusCreating
	}
	if rec != nil {
		info.Base = rec.Base
		info.Created = rec.Created.Format("2006-01-02 15:04:05 -0700 MST")
	}
	return info
}

// Outcome says what a pause or resume did.
type Outcome struct {
	Name    string `json:"name"`
	Repo    string `json:"repo,omitempty"`
	Changed bool   `json:"changed"`
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Pause freezes a sandbox. Pausing a paused sandbox succeeds and says so.
func (m *Manager) Pause(ctx context.Context, name string) (Outcome, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return Outcome{}, err
	}
	n, in, err := m.Repo.OwnContainer(ctx, slug)
	if err != nil {
		return Outcome{Name: slug}, err
	}
	if in.State == "paused" { // the inspect said so: no second call
		return alreadyPaused(slug), nil
	}
	return m.pauseBox(ctx, slug, m.Repo.BoxOf(n))
}

func (m *Manager) pauseBox(ctx context.Context, slug string, b box.Box) (Outcome, error) {
	o := Outcome{Name: slug}
	err := b.Pause(ctx)
	switch {
	case err == nil && !m.Repo.Provider.Caps().Freeze:
		o.Changed, o.Status, o.Message = true, create.StatusStopped, fmt.Sprintf("Stopped sandbox '%s': its pod is deleted, its claim (/src) kept; resume makes a new pod.", slug)
	case err == nil:
		o.Changed, o.Status, o.Message = true, create.StatusPaused, fmt.Sprintf("Paused sandbox '%s'.", slug)
		if err := m.Proxies().Follow(ctx, slug, b.Name, true); err != nil {
			return o, err
		}
	case errors.Is(err, box.ErrAlreadyPaused):
		return alreadyPaused(slug), nil
	case errors.Is(err, box.ErrNotRunning):
		o.Status, o.Message = create.StatusStopped, fmt.Sprintf("Sandbox '%s' is stopped, so there is nothing to pause.", slug)
	case errors.Is(err, box.ErrNotFound):
		return o, m.Repo.MissingOrNotFound(ctx, slug)
	default:
		return o, fmt.Errorf("pausing sandbox '%s': %w", slug, err)
	}
	return o, nil
}

// Resume thaws a paused sandbox, or starts a stopped one. Resuming an active
// sandbox succeeds and says so.
func (m *Manager) Resume(ctx context.Context, name string) (Outcome, error) {
	slug, err := m.Repo.Resolve(name)
	if err != nil {
		return Outcome{}, err
	}
	n, in, err := m.Repo.OwnContainer(ctx, slug)
	if err != nil {
		return Outcome{Name: slug}, err
	}
	return m.resumeBox(ctx, slug, m.Repo.BoxOf(n), &in)
}

func alreadyPaused(slug string) Outcome {
	return Outcome{Name: slug, Status: create.StatusPaused, Message: fmt.Sprintf("Sandbox '%s' is already paused.", slug)}
}

// resumeBox unpauses or starts sandbox slug's box b. in is its inspection when
// the caller has one, so only the call its state needs is made; nil asks
// the engine by trying to unpause first.
func (m *Manager) resumeBox(ctx context.Context, slug string, b box.Box, in *box.Inspection) (Outcome, error) {
	o := Outcome{Name: slug}
	if in == nil || in.State == "paused" {
		err := b.Unpause(ctx)
		switch {
		case err == nil:
			o.Changed, o.Status, o.Message = true, create.StatusActive, fmt.Sprintf("Resumed sandbox '%s'.", slug)
			return o, m.Proxies().Follow(ctx, slug, b.Name, false)
		case errors.Is(err, box.ErrNotFound):
			return o, m.Repo.MissingOrNotFound(ctx, slug)
		case !errors.Is(err, box.ErrNotPaused):
			return o, fmt.Errorf("resuming sandbox '%s' (it is still paused): %w", slug, err)
		}
		// Not paused: either running already or stopped (engine restart).
		i, err := b.Inspect(ctx)
		if err != nil {
			return o, fmt.Errorf("resuming sandbox '%s': %w", slug, err)
		}
		in = &i
	}
	if in.State == "running" {
		o.Status, o.Message = create.StatusActive, fmt.Sprintf("Sandbox '%s' is already active.", slug)
		// Its proxy may have stopped (killed at its memory limit).
		return o, m.Proxies().Follow(ctx, slug, b.Name, false)
	}
	if err := b.Start(ctx); err != nil {
		return o, fmt.Errorf("starting stopped sandbox '%s': %w", slug, err)
	}
	if !m.Repo.Provider.Caps().Freeze {
		h, err := m.Agent.FindHelper()
		if err == nil {
			err = h.Deliver(ctx, b)
		}
		if err != nil {
			return o, fmt.Errorf("starting stopped sandbox '%s': %w", slug, err)
		}
	}
	if err := m.Proxies().Follow(ctx, slug, b.Name, false); err != nil {
		return o, err
	}
	if err := m.awake(ctx, b, in.Labels); err != nil {
		return o, fmt.Errorf("starting stopped sandbox '%s': %w", slug, err)
	}
	o.Changed, o.Status, o.Message = true, create.StatusActive, fmt.Sprintf("Started stopped sandbox '%s'.", slug)
	// A started container has lost its processes: start the services again,
	// as create did, unless its setup failed (then create started none).
	var specs map[string]config.ServiceSpec
	if json.Unmarshal([]byte(in.Labels[create.LabelServices]), &specs) != nil || len(specs) == 0 {
		return o, nil
	}
	if m.Repo.Owns(ctx, b.Name, in.Labels) {
		if rec, _ := m.Repo.Store().Load(slug); rec != nil && rec.Status == layout.FailedSetup {
			o.Status = create.StatusFailedSetup
			return o, nil
		}
	}
	states, err := servicectl.Start(ctx, m.Repo, slug, b.Name, specs)
	if err != nil {
		o.Message += " Services: " + strings.ReplaceAll(err.Error(), "\n", "; ")
		return o, nil
	}
	o.Message += fmt.Sprintf(" Started %d service(s).", len(states))
	return o, nil
}

// awake starts the idle clock of a sandbox that stops itself when idle: its
// PID 1 counts from the first question, and resume is a start no call may
// follow.
func (m *Manager) awake(ctx context.Context, b box.Box, labels map[string]string) error {
	if l := create.ParseLimits(labels); l == nil || l.Idle == "" {
		return nil
	}
	_, err := create.ExecChecked(ctx, b, box.ExecSpec{Cmd: m.Agent.Helper.Argv(protocol.CmdAwake{})})
	return err
}

// Scope selects sandboxes for the bulk forms of pause and resume.
type Scope int

// Scopes of PauseAll and ResumeAll.
const (
	ThisRepo Scope = iota
	AllRepos
)

// PauseAll pauses every active sandbox in scope.
func (m *Manager) PauseAll(ctx context.Context, scope Scope) ([]Outcome, error) {
	return m.each(ctx, scope, create.StatusActive, m.pauseBox)
}

// ResumeAll resumes every paused or stopped sandbox in scope.
func (m *Manager) ResumeAll(ctx context.Context, scope Scope) ([]Outcome, error) {
	return m.each(ctx, scope, "", func(ctx context.Context, slug string, b box.Box) (Outcome, error) {
		return m.resumeBox(ctx, slug, b, nil)
	})
}

func (m *Manager) each(ctx context.Context, scope Scope, only string, op func(context.Context, string, box.Box) (Outcome, error)) ([]Outcome, error) {
	list, err := m.List(ctx, scope == AllRepos)
	if err != nil {
		return nil, err
	}
	var outs []Outcome
	var errs []error
	for _, s := range list {
		if s.Status == create.StatusMissing || (only != "" && s.Status != only && s.Status != create.StatusFailedSetup) {
			continue
		}
		if only == "" && s.Status == create.StatusActive {
			continue
		}
		o, err := op(ctx, s.Name, box.Of(m.Repo.Provider, s.Container))
		o.Repo = s.Repo
		if err != nil {
			errs = append(errs, err)
			continue
		}
		outs = append(outs, o)
	}
	return outs, errors.Join(errs...)
}
