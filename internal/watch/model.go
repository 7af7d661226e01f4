package watch

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/litterbox-dev/litterbox/internal/agenttext"
)

// Source is where the view reads the sandboxes: their rows, and the
// recent calls and the diff of one.
type Source interface {
	Rows(ctx context.Context) ([]Row, error)
	Activity(ctx context.Context, name string) (Activity, error)
}

// Activity is one sandbox's recent calls, a line each (newest last), and
// its diff's summary.
type Activity struct {
	// Standing says where the work stands, a line each: the review loop's
	// state and the merge forecast, when there is something to say.
	Standing []string
	Calls    []string
	DiffStat string
}

// Actions are what keys do to the selected sandbox. Diff and Shell hand
// the terminal to a command (the pager, a shell) until it ends.
type Actions interface {
	Pause(ctx context.Context, name string) error
	Resume(ctx context.Context, name string) error
	Apply(ctx context.Context, name string) (string, error)
	Diff(name string) tea.ExecCommand
	Shell(name string) tea.ExecCommand
}

// Model is the view's state; bubbletea drives it (Init, Update, View).
type Model struct {
	Title   string
	Every   time.Duration // how often the rows are read again
	src     Source
	act     Actions
	now     func() time.Time
	rows    []Row
	err     error
	sel     int
	detail  bool
	acti    Activity
	confirm *confirm
	note    string // the outcome of the last action
	width   int
	height  int
	loading bool
}

// confirm is an action waiting for y.
type confirm struct {
	verb, name string
}

// New is a view of src, acting through act, refreshed every every.
func New(title string, src Source, act Actions, every time.Duration, now func() time.Time) *Model {
	return &Model{Title: title, Every: every, src: src, act: act, now: now, width: 80, height: 24}
}

// Messages.
type (
	rowsMsg struct {
		rows []Row
		err  error
	}
	activityMsg struct {
		name string
		a    Activity
		err  error
	}
	tickMsg   struct{}
	actionMsg struct {
		verb, name, out string
		err             error
	}
)

func (m *Model) Init() tea.Cmd { return m.load() }

// load reads the rows; the next read is due Every after it returns.
func (m *Model) load() tea.Cmd {
	if m.loading {
		return nil
	}
	m.loading = true
	return func() tea.Msg {
		rows, err := m.src.Rows(context.Background())
		return rowsMsg{rows, err}
	}
}

func (m *Model) loadActivity() tea.Cmd {
	name := m.selected()
	if name == "" {
		return nil
	}
	return func() tea.Msg {
		a, err := m.src.Activity(context.Background(), name)
		return activityMsg{name, a, err}
	}
}

func (m *Model) tick() tea.Cmd {
	return tea.Tick(m.Every, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m *Model) selected() string {
	if m.sel < 0 || m.sel >= len(m.rows) {
		return ""
	}
	return m.rows[m.sel].Name
}

// Update applies one message: new rows, a key, a new size.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case rowsMsg:
		m.loading = false
		m.rows, m.err = msg.rows, msg.err
		m.sel = min(max(m.sel, 0), max(len(m.rows)-1, 0))
		cmds := []tea.Cmd{m.tick()}
		if m.detail {
			cmds = append(cmds, m.loadActivity())
		}
		return m, tea.Batch(cmds...)
	case tickMsg:
		return m, m.load()
	case activityMsg:
		if msg.name == m.selected() {
			m.acti = msg.a
			if msg.err != nil {
				m.acti = Activity{Calls: []string{"error: " + msg.err.Error()}}
			}
		}
		return m, nil
	case actionMsg:
		m.note = actionNote(msg)
		return m, m.load()
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

// key handles a key press: a pending confirmation takes y or anything
// else; otherwise moving, details, and the actions.
func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if c := m.confirm; c != nil {
		m.confirm = nil
		if k.String() != "y" {
			m.note = c.verb + " cancelled"
			return m, nil
		}
		return m, m.run(c.verb, c.name)
	}
	name := m.selected()
	switch k.String() {
	case "q", "ctrl+c":
		return m, tea.Quit
	case "up", "k":
		if m.sel > 0 {
			m.sel--
			return m, m.detailCmd()
		}
	case "down", "j":
		if m.sel < len(m.rows)-1 {
			m.sel++
			return m, m.detailCmd()
		}
	case "enter":
		m.detail = !m.detail
		return m, m.detailCmd()
	case "esc":
		m.detail = false
	case "p", "r", "a":
		if name != "" {
			m.confirm = &confirm{verb: map[string]string{"p": "pause", "r": "resume", "a": "apply"}[k.String()], name: name}
		}
	case "d":
		if name != "" {
			return m, tea.Exec(m.act.Diff(name), func(err error) tea.Msg { return actionMsg{verb: "diff", name: name, err: err} })
		}
	case "s":
		if name != "" {
			return m, tea.Exec(m.act.Shell(name), func(err error) tea.Msg { return actionMsg{verb: "shell", name: name, err: err} })
		}
	}
	return m, nil
}

func (m *Model) detailCmd() tea.Cmd {
	if !m.detail {
		return nil
	}
	m.acti = Activity{}
	return m.loadActivity()
}

// run does a confirmed action.
func (m *Model) run(verb, name string) tea.Cmd {
	m.note = verb + " " + name + "..."
	return func() tea.Msg {
		ctx := context.Background()
		var out string
		var err error
		switch verb {
		case "pause":
			err = m.act.Pause(ctx, name)
		case "resume":
			err = m.act.Resume(ctx, name)
		case "apply":
			out, err = m.act.Apply(ctx, name)
		}
		return actionMsg{verb: verb, name: name, out: out, err: err}
	}
}

func actionNote(a actionMsg) string {
	switch {
	case a.err != nil:
		return fmt.Sprintf("%s %s: %s", a.verb, a.name, agenttext.FirstLine(a.err.Error()))
	case a.out != "":
		return agenttext.FirstLine(a.out)
	case a.verb == "diff" || a.verb == "shell":
		return ""
	}
	return fmt.Sprintf("%s %s: done", a.verb, a.name)
}

var (
	bold     = lipgloss.NewStyle().Bold(true)
	reversed = lipgloss.NewStyle().Reverse(true)
	faint    = lipgloss.NewStyle().Faint(true)
)

// View is the frame on the terminal's alternate screen, which the
// terminal restores when the view ends.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Frame())
	v.AltScreen = true
	return v
}

// Frame draws the screen: the title, the table with the selected row
// reversed, the selected sandbox's activity when asked for, and the keys
// (or the question an action waits on).
func (m *Model) Frame() string {
	now := m.now()
	var b strings.Builder
	title := fmt.Sprintf("%s  %d sandbox(es)  %s", now.Format("15:04:05"), len(m.rows), m.Title)
	b.WriteString(bold.Render(fit(title, m.width)) + "\n")
	head, lines := Lines(m.rows, m.width, now)
	b.WriteString(faint.Render(fit(head, m.width)) + "\n")
	used := 2
	for i, l := range lines {
		l = fit(l, m.width)
		if i == m.sel {
			l = reversed.Render(l)
		}
		b.WriteString(l + "\n")
		used++
	}
	if len(m.rows) == 0 {
		b.WriteString("(no sandboxes)\n")
		used++
	}
	if m.err != nil {
		b.WriteString(fit("error: "+agenttext.FirstLine(m.err.Error()), m.width) + "\n")
		used++
	}
	if m.detail && m.selected() != "" {
		used += m.detailView(&b, m.height-used-2)
	}
	for ; used < m.height-2; used++ {
		b.WriteString("\n")
	}
	b.WriteString(fit(agenttext.Inert(m.note), m.width) + "\n")
	b.WriteString(faint.Render(fit(m.help(), m.width)))
	return b.String()
}

// detailView writes the selected sandbox's recent calls and diff summary
// in at most room lines, and says how many it wrote.
func (m *Model) detailView(b *strings.Builder, room int) int {
	lines := []string{""}
	for _, l := range m.acti.Standing {
		lines = append(lines, fit(agenttext.Inert(m.selected()+": "+l), m.width))
	}
	lines = append(lines, bold.Render(fit("Sandbox "+m.selected()+": recent calls", m.width)))
	calls := m.acti.Calls
	diff := strings.Split(strings.TrimRight(m.acti.DiffStat, "\n"), "\n")
	if m.acti.DiffStat == "" {
		diff = []string{"(no changes)"}
	}
	keep := max(room-len(lines)-2-min(len(diff), 4), 1)
	if len(calls) > keep {
		calls = calls[len(calls)-keep:]
	}
	if len(calls) == 0 {
		calls = []string{"(no calls)"}
	}
	for _, c := range calls {
		lines = append(lines, fit(agenttext.Inert(c), m.width))
	}
	lines = append(lines, bold.Render("Diff"))
	for _, d := range diff {
		lines = append(lines, fit(agenttext.Inert(d), m.width))
	}
	if len(lines) > room {
		lines = lines[:max(room, 0)]
	}
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	return len(lines)
}

func (m *Model) help() string {
	if c := m.confirm; c != nil {
		return fmt.Sprintf("%s sandbox '%s'? y to %s, any other key to cancel", strings.ToUpper(c.verb[:1])+c.verb[1:], c.name, c.verb)
	}
	return "↑↓ select  enter details  p pause  r resume  a apply  d diff  s shell  q quit"
}
