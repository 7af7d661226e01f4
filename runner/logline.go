package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// Shown is what the log and the audit trail show for a command whose own
// line would not reproduce it when pasted: an agent call speaks the
// helper's protocol on stdin, so its line is the equivalent command (the
// agent's command run with sh -c, a file written from its content) and
// the command itself is named in the line's comment.
type Shown struct {
	Cmd Cmd
	// Input, when set, is piped into Cmd with printf (text only: a
	// shell word cannot hold a NUL byte).
	Input    []byte
	HasInput bool
	// Note says what the shown line leaves out ("the snapshot").
	Note string
}

// Line is the pasteable shell line for s: the input piped in, then Cmd.
func (s *Shown) Line() string {
	if !s.HasInput {
		return ShellLine(s.Cmd)
	}
	c := s.Cmd
	cd := ""
	if c.Dir != "" {
		cd, c.Dir = "cd "+Quote(c.Dir)+" && ", ""
	}
	return cd + "printf %s " + Quote(string(s.Input)) + " | " + ShellLine(c)
}

// Logged renders one finished command as the log and `litterbox log
// --audit` print it: `$ LINE  # exit N, D ms`, a line of a shell session.
// A command spanning lines (an argument with a newline) continues on
// lines that start with "> ", as the shell's own prompt shows it; `sed -n
// 's/^[$>] //p'` turns a log back into a script.
func Logged(line string, exit int, took time.Duration, note string) string {
	comment := fmt.Sprintf("exit %d, %d ms", exit, took.Milliseconds())
	if note != "" {
		comment += "; " + note
	}
	return "$ " + strings.ReplaceAll(line, "\n", "\n> ") + "  # " + comment
}

// logLine is what Exec logs for c: its pasteable line, and a note naming
// the command itself when the line shown is an equivalent. Without
// withInput the shown input is left out (the audit log keeps no content).
func logLine(c Cmd, withInput bool) (line, note string) {
	if c.Shown == nil {
		return ShellLine(c), ""
	}
	note = "ran as: " + ShellLine(Cmd{Name: c.Name, Args: c.Args, Dir: c.Dir, Env: c.Env})
	if c.Shown.Note != "" {
		note += "; " + c.Shown.Note
	}
	if c.Shown.HasInput && !withInput {
		return ShellLine(c.Shown.Cmd), note + fmt.Sprintf("; its %d bytes of input not kept", len(c.Shown.Input))
	}
	return c.Shown.Line(), note
}

// LogFormatter prints the runner's debug entries as Logged lines and any
// other entry as "litterbox: LEVEL: message".
type LogFormatter struct{}

// Format implements logrus.Formatter.
func (LogFormatter) Format(e *logrus.Entry) ([]byte, error) {
	exit, isCmd := e.Data[fieldExit].(int)
	if !isCmd {
		return []byte("litterbox: " + e.Level.String() + ": " + e.Message + "\n"), nil
	}
	took, _ := e.Data[fieldTook].(time.Duration)
	note, _ := e.Data[fieldNote].(string)
	if msg, ok := e.Data[fieldError].(string); ok {
		note = strings.TrimPrefix(note+"; not run: "+msg, "; ")
	}
	return []byte(Logged(e.Message, exit, took, note) + "\n"), nil
}

// The fields of a command's log entry.
const (
	fieldExit  = "exit"
	fieldTook  = "took"
	fieldNote  = "note"
	fieldError = "error"
)
