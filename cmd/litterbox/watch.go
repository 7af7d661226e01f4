package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/litterbox-dev/litterbox/cmd/litterbox/internal/cli"
	"github.com/litterbox-dev/litterbox/internal/agenttext"
	"github.com/litterbox-dev/litterbox/internal/audit"
	"github.com/litterbox-dev/litterbox/internal/box"
	"github.com/litterbox-dev/litterbox/internal/present"
	"github.com/litterbox-dev/litterbox/internal/sandbox"
	"github.com/litterbox-dev/litterbox/internal/watch"
	"github.com/litterbox-dev/litterbox/runner"
)

type watchOptions struct {
	AllRepos bool
	Once     bool
	Every    time.Duration
}

func newWatchCommand(p *cli.Program) *cobra.Command {
	var o watchOptions
	cmd := &cobra.Command{
		Use:   "watch [--all-repos] [--once]",
		Short: "A live view of the sandboxes: who drives each, what runs, what it takes",
		Long: `Show this repository's sandboxes (every repository's with --all-repos), one row
each, refreshed live: status, who drives it (an MCP client and its server's
process, or a litterbox run session), the call running now and for how long,
the age of its last commit, commits ahead, CPU and memory (the engine's stats,
one call per refresh for all), and the connections its egress proxy refused.

Keys: up and down select; enter shows the selected sandbox's recent calls and
diff; p pauses, r resumes and a applies it (each asks y first); d opens its
diff in your pager and s a shell in it; q quits. Nothing changes without a key.

When stdout is not a terminal, the table is printed again every refresh;
--once prints it once.`,
		Example: "  litterbox watch\n  litterbox watch --all-repos\n  litterbox watch --once",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Every < 500*time.Millisecond {
				return cli.Usagef("watch: --every %s is too often: give 500ms or more", o.Every)
			}
			return runWatch(cmd.Context(), p.Env, o)
		},
	}
	cmd.Flags().BoolVar(&o.AllRepos, "all-repos", false, "every repository's sandboxes")
	cmd.Flags().BoolVar(&o.Once, "once", false, "print the table once and exit")
	cmd.Flags().DurationVar(&o.Every, "every", 2*time.Second, "how often to refresh")
	return cmd
}

func runWatch(ctx context.Context, e *cli.Env, o watchOptions) error {
	m, err := e.Manager(ctx)
	if err != nil {
		return err
	}
	src := &watchSource{m: m, all: o.AllRepos}
	title := "litterbox watch " + m.Repo.Root
	if o.AllRepos {
		title = "litterbox watch, every repository"
	}
	width := cli.TerminalWidth(e.Stdout)
	if o.Once || !cli.IsTerminal(e.Stdout) {
		src.wait = true
		for {
			rows, err := src.Rows(ctx)
			if err != nil {
				return err
			}
			fmt.Fprint(e.Stdout, watch.Frame(title, rows, width, time.Now()))
			if o.Once {
				return nil
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(o.Every):
				fmt.Fprintln(e.Stdout)
			}
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	act := &watchActions{run: e.Run, self: self, repo: m.Repo.Root, rows: src}
	model := watch.New(title, src, act, o.Every, time.Now)
	in, _ := e.Stdin.(*os.File)
	out, _ := e.Stdout.(*os.File)
	_, err = tea.NewProgram(model, tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out)).Run()
	if ctx.Err() != nil {
		return nil // Ctrl-C or SIGTERM: the view ends.
	}
	return err
}

// watchSource reads the rows from what Litterbox writes: list (records,
// the engine's containers, the branches, the sandboxes' locks: the call
// running and who drives each), the branches' dates, and the engine's
// stats.
type watchSource struct {
	m   *sandbox.Manager
	all bool
	// repoOf remembers each row's repository, for the actions, which run
	// beside the next refresh (under mu).
	repoOf map[string]string
	// stats is the engine's last stats, read apart from the rows: a
	// `docker stats` samples for a second or two, which would hold back
	// every refresh of the rest. A plain frame (wait) reads them with it.
	// mu guards stats, sampling and repoOf.
	wait     bool
	mu       sync.Mutex
	stats    map[string]box.Usage
	sampling bool
	// standing is each sandbox's review and forecast lines as the last
	// refresh found them, for its details (under mu).
	standing map[string][]string
}

// usage is the last stats read, and starts the next read if none runs.
// Without stats (a cluster) the columns say "-".
func (s *watchSource) usage(ctx context.Context) map[string]box.Usage {
	st, ok := s.m.Repo.Provider.(box.StatsReader)
	if !ok {
		return nil
	}
	if s.wait {
		u, _ := st.Stats(ctx)
		return u
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.sampling {
		s.sampling = true
		go func() {
			u, err := st.Stats(ctx)
			s.mu.Lock()
			defer s.mu.Unlock()
			if err == nil {
				s.stats = u
			}
			s.sampling = false
		}()
	}
	return s.stats
}

func (s *watchSource) Rows(ctx context.Context) ([]watch.Row, error) {
	infos, err := s.m.List(ctx, s.all)
	if err != nil {
		return nil, err
	}
	// Without a forecast the rows still stand; the details lack it.
	_ = s.m.Forecast(ctx, infos)
	standing, merge := map[string][]string{}, map[string]string{}
	for _, in := range infos {
		merge[in.Name] = present.MergeWord(in.Forecast)
		for _, line := range []string{present.ReviewLine(in.Review), present.ForecastLine(in.Forecast)} {
			if line != "" {
				standing[in.Name] = append(standing[in.Name], line)
			}
		}
	}
	usage := s.usage(ctx)
	dates, _ := s.m.Repo.Git.RefDates(ctx, "refs/heads/litterbox/")
	repoOf := map[string]string{}
	rows := make([]watch.Row, 0, len(infos))
	for _, in := range infos {
		r := watch.Row{Name: in.Name, Repo: in.Repo, Status: in.Status, Ahead: in.CommitsAhead, Merge: merge[in.Name]}
		for _, n := range in.Refused {
			r.Refused += n
		}
		if u, ok := usage[in.Container]; ok {
			r.CPU, r.Memory = u.CPU, u.Memory
		}
		// A branch with nothing on its base has not moved: its date is
		// the base commit's, however old, not the sandbox's.
		if in.Repo == s.m.Repo.RepoPath && in.CommitsAhead != nil && *in.CommitsAhead > 0 {
			r.LastCommit = dates["refs/heads/"+in.Branch]
		}
		if in.Owner != nil {
			r.Owner = present.Owner(in.Owner)
		}
		if in.Call != nil {
			r.Call, r.CallSince = agenttext.FirstLine(in.Call.Call), in.Call.Since
		}
		if in.Agent != nil {
			r.Owner = "run: " + in.Agent.Command
		}
		repoOf[in.Name] = in.Repo
		rows = append(rows, r)
	}
	s.mu.Lock()
	s.repoOf, s.standing = repoOf, standing
	s.mu.Unlock()
	return rows, nil
}

// Activity is the sandbox's last calls from the audit log and its diff's
// summary.
func (s *watchSource) Activity(ctx context.Context, name string) (watch.Activity, error) {
	var a watch.Activity
	s.mu.Lock()
	a.Standing = s.standing[name]
	s.mu.Unlock()
	entries, err := audit.Log{Path: s.m.Repo.AuditPath()}.Read(name)
	if err != nil {
		return a, err
	}
	for _, e := range entries[max(len(entries)-50, 0):] {
		a.Calls = append(a.Calls, present.AuditLine(e))
	}
	var diff strings.Builder
	if err := s.m.Diff(ctx, name, []string{"--stat=72"}, &diff, io.Discard); err != nil {
		return a, err
	}
	a.DiffStat = diff.String()
	return a, nil
}

// watchActions does what the view's keys ask by running this program's
// own commands (litterbox pause NAME, ...), through the runner like every
// other process, so each behaves and logs exactly as typed.
type watchActions struct {
	run  runner.Runner
	self string
	repo string
	rows *watchSource
}

func (a *watchActions) cmd(verb, name string, extra ...string) runner.Cmd {
	repo := a.repo
	a.rows.mu.Lock()
	if r := a.rows.repoOf[name]; r != "" {
		repo = r
	}
	a.rows.mu.Unlock()
	return runner.Cmd{Name: a.self, Args: slices.Concat([]string{"--repo", repo, verb, name}, extra)}
}

func (a *watchActions) quiet(ctx context.Context, verb, name string, extra ...string) (string, error) {
	res, err := a.run.Run(ctx, a.cmd(verb, name, extra...))
	if err != nil {
		if x, ok := runner.AsExit(err); ok && len(x.Result.Stderr) > 0 {
			return "", fmt.Errorf("%s", strings.TrimPrefix(agenttext.FirstLine(x.Stderr()), "Error: "))
		}
		return "", err
	}
	return agenttext.FirstLine(string(res.Stdout) + string(res.Stderr)), nil
}

func (a *watchActions) Pause(ctx context.Context, name string) error {
	_, err := a.quiet(ctx, "pause", name)
	return err
}

func (a *watchActions) Resume(ctx context.Context, name string) error {
	_, err := a.quiet(ctx, "resume", name)
	return err
}

func (a *watchActions) Apply(ctx context.Context, name string) (string, error) {
	return a.quiet(ctx, "apply", name)
}

func (a *watchActions) Diff(name string) tea.ExecCommand {
	return &terminalCmd{run: a.run, cmd: a.cmd("diff", name), hold: true}
}

func (a *watchActions) Shell(name string) tea.ExecCommand {
	return &terminalCmd{run: a.run, cmd: a.cmd("shell", name)}
}

// terminalCmd is a command the view hands the terminal to (bubbletea's
// ExecCommand), run by the runner. hold keeps its output on the screen
// until Enter: git's pager quits at once when a diff fits the screen
// (less -F), and the view would cover it before it was read.
type terminalCmd struct {
	run  runner.Runner
	cmd  runner.Cmd
	hold bool
}

func (c *terminalCmd) SetStdin(r io.Reader)  { c.cmd.Stdin = r }
func (c *terminalCmd) SetStdout(w io.Writer) { c.cmd.Stdout = w }
func (c *terminalCmd) SetStderr(w io.Writer) { c.cmd.Stderr = w }
func (c *terminalCmd) Run() error {
	_, err := c.run.Run(context.Background(), c.cmd)
	if c.hold && c.cmd.Stdin != nil && c.cmd.Stdout != nil {
		fmt.Fprint(c.cmd.Stdout, "\n[Enter: back to litterbox watch]")
		untilEnter(c.cmd.Stdin)
	}
	return err
}

// untilEnter reads r a byte at a time up to a newline (or its end), so
// nothing typed after it is taken from the view.
func untilEnter(r io.Reader) {
	b := make([]byte, 1)
	for {
		if n, err := r.Read(b); err != nil || (n == 1 && (b[0] == '\n' || b[0] == '\r')) {
			return
		}
	}
}
