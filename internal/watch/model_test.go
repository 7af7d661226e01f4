package watch

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

var at = time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)

func intp(n int) *int { return &n }

// frames are rows as a source gives them over three refreshes: a call
// starts, runs, and ends in a commit; a second sandbox is paused.
var frames = [][]Row{
	{{Name: "fix-login", Status: "active", Owner: "claude-code (4242)", LastCommit: at.Add(-5 * time.Minute), Ahead: intp(2), CPU: "0.10%", Memory: "1.5MiB"},
		{Name: "docs", Status: "paused", Ahead: intp(0)}},
	{{Name: "fix-login", Status: "active", Owner: "claude-code (4242)", Call: "bash: go test ./...", CallSince: at.Add(-12 * time.Second), LastCommit: at.Add(-5 * time.Minute), Ahead: intp(2), CPU: "98.50%", Memory: "310MiB"},
		{Name: "docs", Status: "paused", Ahead: intp(0)}},
	{{Name: "fix-login", Status: "active", Owner: "claude-code (4242)", LastCommit: at.Add(-time.Second), Ahead: intp(3), CPU: "0.20%", Memory: "12MiB", Refused: 2},
		{Name: "docs", Status: "stopped (idle)", Ahead: intp(0)}},
}

type fakeSource struct{ n int }

func (f *fakeSource) Rows(context.Context) ([]Row, error) {
	r := frames[min(f.n, len(frames)-1)]
	f.n++
	return r, nil
}

func (f *fakeSource) Activity(_ context.Context, name string) (Activity, error) {
	return Activity{Standing: []string{"ready (agent): done"}, Calls: []string{name + " call 1", name + " call 2"}, DiffStat: " a.txt | 1 +\n 1 file changed\n"}, nil
}

type fakeActions struct{ did []string }

func (a *fakeActions) Pause(_ context.Context, name string) error {
	a.did = append(a.did, "pause "+name)
	return nil
}
func (a *fakeActions) Resume(_ context.Context, name string) error {
	a.did = append(a.did, "resume "+name)
	return errors.New("sandbox 'docs' is not paused\nmore")
}
func (a *fakeActions) Apply(_ context.Context, name string) (string, error) {
	a.did = append(a.did, "apply "+name)
	return "Applied 3 commits of 'fix-login'.", nil
}
func (a *fakeActions) Diff(name string) tea.ExecCommand  { return nopExec{} }
func (a *fakeActions) Shell(name string) tea.ExecCommand { return nopExec{} }

type nopExec struct{}

func (nopExec) Run() error            { return nil }
func (nopExec) SetStdin(io.Reader)    {}
func (nopExec) SetStdout(w io.Writer) {}
func (nopExec) SetStderr(w io.Writer) {}

// drive feeds msg to the model and then whatever its commands return at
// once (not ticks: a test steps time itself).
func drive(t *testing.T, m *Model, msg tea.Msg) {
	t.Helper()
	queue := []tea.Msg{msg}
	for len(queue) > 0 {
		msg, queue = queue[0], queue[1:]
		_, cmd := m.Update(msg)
		queue = append(queue, run(cmd)...)
	}
}

// run runs cmd and the batches in it, leaving out ticks and exec.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	select {
	case msg := <-done:
		if b, ok := msg.(tea.BatchMsg); ok {
			var out []tea.Msg
			for _, c := range b {
				out = append(out, run(c)...)
			}
			return out
		}
		if _, ok := msg.(tickMsg); ok || msg == nil {
			return nil
		}
		return []tea.Msg{msg}
	case <-time.After(50 * time.Millisecond):
		return nil // a tick or an exec, which the test does not wait for
	}
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	}
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

func TestModelFollowsTheRowsAndConfirmsActions(t *testing.T) {
	src, act := &fakeSource{}, &fakeActions{}
	m := New("litterbox watch /repo", src, act, time.Second, func() time.Time { return at })
	drive(t, m, m.Init()())
	view := m.Frame()
	if !strings.Contains(view, "09:30:00  2 sandbox(es)  litterbox watch /repo") || !strings.Contains(view, "fix-login  active  claude-co…") {
		t.Fatalf("first frame:\n%s", view)
	}
	// The running call shows with how long it has run.
	drive(t, m, tickMsg{})
	if !strings.Contains(m.Frame(), "12s bash: go test") {
		t.Errorf("second frame lacks the running call:\n%s", m.Frame())
	}
	// A key that asks is not an action until y.
	drive(t, m, key("p"))
	if len(act.did) != 0 || !strings.Contains(m.Frame(), "Pause sandbox 'fix-login'? y to pause") {
		t.Fatalf("p acted without asking, or did not ask: %v\n%s", act.did, m.Frame())
	}
	drive(t, m, key("n"))
	if len(act.did) != 0 || !strings.Contains(m.Frame(), "pause cancelled") {
		t.Errorf("n did not cancel: %v", act.did)
	}
	drive(t, m, key("p"))
	drive(t, m, key("y"))
	if strings.Join(act.did, ",") != "pause fix-login" || !strings.Contains(m.Frame(), "pause fix-login: done") {
		t.Errorf("after p y: %v\n%s", act.did, m.Frame())
	}
	// The third frame: the call ended, the commit is a second old, the
	// other sandbox stopped itself.
	if !strings.Contains(m.Frame(), "idle") || strings.Contains(m.Frame(), "go test") {
		t.Errorf("third frame:\n%s", m.Frame())
	}
	// Down selects the second row; an action's error is one line.
	drive(t, m, key("down"))
	drive(t, m, key("r"))
	drive(t, m, key("y"))
	if !strings.Contains(m.Frame(), "resume docs: sandbox 'docs' is not paused") || strings.Contains(m.Frame(), "more") {
		t.Errorf("resume's error:\n%s", m.Frame())
	}
	// Enter shows the selected sandbox's calls and diff.
	drive(t, m, key("enter"))
	if v := m.Frame(); !strings.Contains(v, "Sandbox docs: recent calls") || !strings.Contains(v, "docs call 2") || !strings.Contains(v, "1 file changed") || !strings.Contains(v, "docs: ready (agent): done") {
		t.Errorf("details:\n%s", v)
	}
	drive(t, m, key("up"))
	drive(t, m, key("a"))
	drive(t, m, key("y"))
	if !strings.Contains(m.Frame(), "Applied 3 commits of 'fix-login'.") {
		t.Errorf("apply:\n%s", m.Frame())
	}
}

// At 80x24 every column keeps its place and no line passes 80 columns;
// what an agent chose cannot reach the terminal as a control sequence.
func TestViewFitsTheTerminal(t *testing.T) {
	src := &fakeSource{}
	m := New("litterbox watch /a/very/long/path/to/a/repository/that/does/not/fit/on/one/line/at/all", src, &fakeActions{}, time.Second, func() time.Time { return at })
	drive(t, m, m.Init()())
	m.rows[0].Call = "bash: printf '\x1b]52;c;cHdu\x07' && " + strings.Repeat("long ", 40)
	m.rows[0].CallSince = at.Add(-3 * time.Minute)
	drive(t, m, tea.WindowSizeMsg{Width: 80, Height: 24})
	v := m.Frame()
	lines := strings.Split(v, "\n")
	if len(lines) != 24 {
		t.Errorf("%d lines, want 24:\n%s", len(lines), v)
	}
	for _, l := range lines {
		if n := len([]rune(stripANSI(l))); n > 80 {
			t.Errorf("a line of %d columns: %q", n, l)
		}
	}
	if strings.Contains(v, "\x1b]52") || strings.Contains(v, "\x07") {
		t.Errorf("the agent's escape reached the view: %q", v)
	}
	head, _ := Lines(nil, 80, at)
	if head != "NAME       STATUS  OWNER      CALL                 LAST AHEAD    CPU     MEM NET" {
		t.Errorf("heading at 80 columns: %q", head)
	}
}

// stripANSI drops the view's own styling (SGR sequences).
func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestFrameAndAge(t *testing.T) {
	got := Frame("t", frames[1], 80, at)
	want := "t\n" +
		"NAME       STATUS  OWNER      CALL                 LAST AHEAD    CPU     MEM NET\n" +
		"fix-login  active  claude-co… 12s bash: go test .…   5m     2 98.50%  310MiB   -\n" +
		"docs       paused  -          -                       -     0      -       -   -\n"
	if got != want {
		t.Errorf("frame:\n%s\nwant:\n%s", got, want)
	}
	// From 100 columns on, MERGE says how each sandbox's work would meet
	// the branch.
	rows := append([]Row{}, frames[1]...)
	rows[0].Merge = "2 behind"
	got = Frame("t", rows, 100, at)
	want = "t\n" +
		"NAME         STATUS  OWNER        CALL                       LAST AHEAD    CPU     MEM NET MERGE\n" +
		"fix-login    active  claude-code… 12s bash: go test ./...      5m     2 98.50%  310MiB   - 2 behind\n" +
		"docs         paused  -            -                             -     0      -       -   - -\n"
	if got != want {
		t.Errorf("frame at 100 columns:\n%s\nwant:\n%s", got, want)
	}
	for d, want := range map[time.Duration]string{9 * time.Second: "9s", 3 * time.Minute: "3m", 30 * time.Hour: "30h", 100 * time.Hour: "4d"} {
		if got := Age(d); got != want {
			t.Errorf("Age(%v) = %q, want %q", d, got, want)
		}
	}
}
