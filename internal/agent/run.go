package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/layout"
	"github.com/litterbox-dev/litterbox/internal/result"
	"github.com/litterbox-dev/litterbox/runner"
)

// RunKind is the kind of a `litterbox run` session's commits
// ("run: app.py, README.md (2 files)", the command in the body).
const RunKind = "run"

// Defaults of RunOptions: a commit once the files have been still for
// RunQuiet, and at least every RunMost while they keep changing.
const (
	RunQuiet = 1500 * time.Millisecond
	RunMost  = 30 * time.Second
)

// RunOptions describe a session of a command (an agent) in a sandbox.
type RunOptions struct {
	ExecOptions
	// Quiet and Most: what changed is committed once the files have been
	// still for Quiet, or have kept changing for Most (defaults RunQuiet
	// and RunMost).
	Quiet, Most time.Duration
	// Committed, when set, is told of each commit as the session makes it.
	Committed func(*result.Act)
}

// Run runs o's command in sandbox name until it exits, committing what
// changed while it runs (each time the files settle) and once more at its
// end, whatever ended it. A host process killed mid-session loses
// nothing: what is left is committed by the sandbox's next call.
func (m *Agent) Run(ctx context.Context, name string, o RunOptions) (*result.Run, error) {
	slug, n, err := m.running(ctx, name)
	if err != nil {
		return nil, err
	}
	h, _, err := m.helperFor(ctx, slug)
	if err != nil {
		return nil, err
	}
	detail := runner.Join(o.Cmd)
	end, other, err := layout.HoldSession(m.Repo.Layout().Session(slug), layout.Holder{Call: RunKind + ": " + detail, Since: m.Repo.Now(), PID: os.Getpid()})
	if err != nil {
		return nil, fmt.Errorf("marking sandbox '%s' as running an agent: %w", slug, err)
	}
	if other != nil {
		return nil, fmt.Errorf("sandbox '%s' already runs an agent (%s, since %s, process %d): wait for it to end, or run in a sandbox of its own (litterbox fork %s NEW)",
			slug, agenttext.Inert(agenttext.Elide(other.Call, 100)), other.Since.Local().Format(time.DateTime), other.PID, slug)
	}
	defer end()
	if o.Quiet <= 0 {
		o.Quiet = RunQuiet
	}
	if o.Most <= 0 {
		o.Most = RunMost
	}
	s := &runSession{m: m, slug: slug, detail: detail, committed: o.Committed}
	code, runErr := m.session(ctx, slug, n, o.ExecOptions, func(ctx context.Context, env map[string]string) {
		s.settle(ctx, box.ExecSpec{Interactive: true, Cmd: h.Argv(protocol.CmdSettle{Quiet: o.Quiet, Most: o.Most}), Env: env})
	})
	// Interrupted or not, what is left is committed.
	commitErr := s.commit(context.WithoutCancel(ctx))
	return &result.Run{ExitCode: code, Commits: s.commits}, errors.Join(runErr, commitErr)
}

// runSession is one Run's commits.
type runSession struct {
	m         *Agent
	slug      string
	detail    string
	committed func(*result.Act)

	mu      sync.Mutex
	commits []string
}

// settle commits each time the helper's settle, run by spec, says the
// files have settled, until ctx ends. A failed commit (the sandbox's lock
// held past its wait, say) is left for the next one. It starts with the
// session, not after it: the helper's settle ends the session when its
// stdin, held by this process, ends, so a litterbox killed at any moment
// takes its session with it (at the price of two execs starting together,
// which delayed the agent's first output by ~150 ms on 2 cores).
func (s *runSession) settle(ctx context.Context, spec box.ExecSpec) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := s.m.Repo.Box(s.slug).Exec(ctx, spec, box.Streams{Stdin: inR, Stdout: outW, Stderr: io.Discard})
		// A settle that ended (killed by the agent, say) reads no more:
		// the answer to its last line fails rather than waits forever.
		inR.Close()
		outW.CloseWithError(errOrEOF(err))
	}()
	lines := bufio.NewReader(outR)
	for nextLine(lines) == nil && ctx.Err() == nil {
		// The commit finishes even when the session ends meanwhile.
		_ = s.commit(context.WithoutCancel(ctx))
		if _, err := io.WriteString(inW, "\n"); err != nil {
			break
		}
	}
	inW.Close()
	outR.Close()
	<-done
}

// nextLine reads up to the end of the next line and drops it: settle's
// lines only say "settled", and the agent may write into settle's output
// (it runs as the same user), so a line of any length is one line, not an
// end of the session, as a bufio.Scanner's token limit would make it.
func nextLine(r *bufio.Reader) error {
	for {
		_, err := r.ReadSlice('\n')
		if !errors.Is(err, bufio.ErrBufferFull) {
			return err
		}
	}
}

// commit snapshots what changed since the last commit.
func (s *runSession) commit(ctx context.Context) error {
	res, err := s.m.act(ctx, s.slug, Action{Op: protocol.OpScan, Kind: RunKind, Detail: s.detail, Counted: true})
	if err != nil || res.Snapshot == "" {
		return err
	}
	s.mu.Lock()
	s.commits = append(s.commits, res.Snapshot)
	s.mu.Unlock()
	if s.committed != nil {
		s.committed(res)
	}
	return nil
}
