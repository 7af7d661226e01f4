package protocol

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The helper's command lines: every subcommand but act's conversation takes
// positional strings. Each has a type here whose Argv is what the host runs
// and whose parser, beside it, is what the helper reads back; the table
// below holds their order, arity and usage, so the two ends cannot drift.

// Dir is where every sandbox keeps its helper: a volume of the container's
// own (removed with it), owned by root, so the sandbox user can run the
// helper but not replace it. Each build of the helper gets a folder named by
// its id, so a newer Litterbox delivers its own next to the one PID 1 runs.
const Dir = "/.litterbox"

// Name is the helper's file name in the sandbox; the litterbox binary
// behaves as the helper when started under this name.
const Name = "litterbox-helper"

// Command is one command line of the helper.
type Command interface {
	// Argv is the command line after the helper's own path.
	Argv() []string
}

// command is one row of the helper's usage: its name, the synopsis of its
// arguments (their count is its arity unless variadic) and its parser,
// which gets exactly that many arguments.
type command struct {
	name, args, help string
	variadic         bool
	parse            func(a []string) (Command, error)
}

// commands are the helper's subcommands, in the order its usage lists them.
var commands = []command{
	{name: "init", args: "[--idle=DURATION] [/DIR...]", variadic: true, help: "PID 1 of a sandbox, counting DIRs (its other volumes)\nwith /src for the disk guard; with --idle, it ends the\nsandbox (exit 75) after DURATION of no call and no CPU use",
		parse: parseInit},
	{name: "act", help: "one agent call (protocol on stdin/stdout)", parse: func([]string) (Command, error) { return CmdAct{}, nil }},
	{name: "serve", help: "one act after another over one stream kept open\n(litterbox mcp, litterbox run)", parse: func([]string) (Command, error) { return CmdServe{}, nil }},
	{name: "cat", args: "PATH MAX", help: "print a file of at most MAX bytes", parse: parseCat},
	{name: "read", args: "PATH OFFSET LIMIT MAXBYTES", help: "lines of a file, as JSON", parse: parseRead},
	{name: "ls", args: "PATH RECURSIVE MAX", help: "entries, as JSON (RECURSIVE 0 or 1)", parse: parseLs},
	{name: "glob", args: "PATH PATTERN MAX", help: "files matching a ** glob, as JSON", parse: parseGlob},
	{name: "grep", args: "PATH REGEXP INCLUDE MAX", help: "matching lines, as JSON", parse: parseGrep},
	{name: "tar", args: "PATH", help: "a tar of PATH on stdout", parse: func(a []string) (Command, error) { return CmdTar{a[0]}, nil }},
	{name: "copy", args: "FROM TO [FROM TO...]", variadic: true, parse: parseCopy,
		help: "copy each tree FROM into the directory TO (cp -a),\nbut the NUL-separated paths on stdin (relative to\nthe first FROM)"},
	{name: "copy-layer", args: "UPPER MERGED TO [FROM TO...]", variadic: true, parse: parseCopyLayer,
		help: "make TO, a new overlay over MERGED's lower layers,\nhold what MERGED (UPPER over them) holds, copying\nonly UPPER; then copy each tree FROM into TO as copy\ndoes"},
	{name: "put", args: "PATH", help: "write stdin to PATH (an agent's write, as logged)", parse: func(a []string) (Command, error) { return CmdPut{a[0]}, nil }},
	{name: "rm", args: "PATH", help: "remove PATH (an agent's patch deleting a file)", parse: func(a []string) (Command, error) { return CmdRm{a[0]}, nil }},
	{name: "prepare", args: "UID DIR...", variadic: true, help: "give each DIR to UID (run as root)", parse: parsePrepare},
	{name: "kill", args: "NAME=VALUE", help: "kill every process with that variable, and those below", parse: parseKill},
	{name: "settle", args: "QUIET MOST", help: "print a line each time /src changed and then stayed\nstill for QUIET ms (or kept changing for MOST ms);\nwait for a line on stdin after each (litterbox run)", parse: parseSettle},
	{name: "sized", args: "CMD...", variadic: true, help: "run CMD once the terminal on stdin has a size (docker\nexec -t sets it just after the start)", parse: parseSized},
	{name: "awake", help: "start PID 1's idle clock now (resume asks it; a call\ndoes it by asking PID 1 what changed)", parse: func([]string) (Command, error) { return CmdAwake{}, nil }},
	{name: "probe", args: "[PROGRAM]", variadic: true, help: "what the sandbox offers, as JSON (with where PROGRAM is)", parse: parseProbe},
	{name: "proxy", args: "ADDR ALLOW [CONTROL]", variadic: true, parse: parseProxy,
		help: "the egress proxy on ADDR for ALLOW (a,b,*.c:443), taking\nthe secrets it injects on the socket CONTROL"},
	{name: "inject", args: "CONTROL", help: "give the egress proxy on CONTROL the secrets on stdin", parse: func(a []string) (Command, error) { return CmdInject{a[0]}, nil }},
	{name: "version", help: "the protocol version", parse: func([]string) (Command, error) { return CmdVersion{}, nil }},
	{name: "untar", args: "DIR", help: "extract the tar on stdin into DIR (docker cp -)", parse: func(a []string) (Command, error) { return CmdUntar{a[0]}, nil }},
	{name: "with-env", args: "DETACH DIR SECRETS [NAME=VALUE...] -- CMD...", variadic: true, parse: parseWithEnv,
		help: "run CMD in DIR (if not empty) with NAME=VALUE and, when\nSECRETS is 1, the pairs on stdin (LENGTH\\n then\nNUL-separated NAME=VALUE), detached when DETACH is 1\n(kubectl exec has no -e, -w, -d)"},
}

// Usage is the helper's usage text, printed with every refused command line.
var Usage = usage()

// usage lays out the table: a synopsis too long for its column puts the
// help on the lines below.
func usage() string {
	const col = 37
	var b strings.Builder
	b.WriteString("usage: " + Name + " COMMAND [ARG...]")
	for _, c := range commands {
		line := strings.TrimSpace("  " + c.name + " " + c.args)
		b.WriteString("\n  " + line)
		pad := col - 2 - len(line)
		if pad < 1 {
			b.WriteString("\n")
			pad = col
		}
		b.WriteString(strings.Repeat(" ", pad))
		b.WriteString(strings.ReplaceAll(c.help, "\n", "\n"+strings.Repeat(" ", col)))
	}
	return b.String()
}

// ParseCommand reads a helper command line (without the helper's path). Its
// errors are the helper's usage errors, as it prints them.
func ParseCommand(args []string) (Command, error) {
	if len(args) == 0 {
		return nil, errors.New(Usage)
	}
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == args[0] })
	if i < 0 {
		return nil, errors.New("unknown command " + strconv.Quote(args[0]) + "\n" + Usage)
	}
	c, a := commands[i], args[1:]
	if n := len(strings.Fields(c.args)); !c.variadic && len(a) != n {
		return nil, fmt.Errorf("%s takes %d arguments\n%s", c.name, n, Usage)
	}
	cmd, err := c.parse(a)
	if err == errSynopsis {
		return nil, errors.New(c.name + " takes " + c.args + "\n" + Usage)
	}
	if err != nil {
		return nil, err
	}
	return cmd, nil
}

// errSynopsis is a parser's refusal of a variadic command line that does
// not fit its synopsis; ParseCommand says so with the usage.
var errSynopsis = errors.New("synopsis")

// count reads a non-negative number, as every count on a command line is.
func count(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a count: %q", s)
	}
	return n, nil
}

// counts reads each of a as a count.
func counts(a ...string) ([]int, error) {
	out := make([]int, len(a))
	for i, s := range a {
		var err error
		if out[i], err = count(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// flag is how a command line spells a yes/no: "1" is yes, anything else no.
func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// CmdInit makes the helper PID 1 of a sandbox; Volumes are the sandbox's
// volumes besides /src (its home, its kept paths), which the disk guard
// counts with /src; Idle, when set, is how long the sandbox may go without
// a call or CPU use before PID 1 ends it with IdleExit.
type CmdInit struct {
	Idle    time.Duration
	Volumes []string
}

// IdleExit is PID 1's exit status when it ended an idle sandbox: the
// engine keeps it, and the next call starts the sandbox again.
const IdleExit = 75

func (c CmdInit) Argv() []string {
	a := []string{"init"}
	if c.Idle > 0 {
		a = append(a, "--idle="+c.Idle.String())
	}
	return append(a, c.Volumes...)
}

func parseInit(a []string) (Command, error) {
	var c CmdInit
	if len(a) > 0 && strings.HasPrefix(a[0], "--idle=") {
		d, err := time.ParseDuration(strings.TrimPrefix(a[0], "--idle="))
		if err != nil || d <= 0 {
			return nil, errSynopsis
		}
		c.Idle, a = d, a[1:]
	}
	if len(a) == 0 {
		return c, nil
	}
	for _, d := range a {
		if !strings.HasPrefix(d, "/") {
			return nil, errSynopsis
		}
	}
	c.Volumes = a
	return c, nil
}

// CmdAct is one agent call, speaking the framed protocol on stdin and stdout.
type CmdAct struct{}

func (CmdAct) Argv() []string { return []string{"act"} }

// CmdServe runs act conversations one after another over one stream: each
// opens with a TCall and ends with a TOver from the host and a TDone from
// the helper; TPing is answered between them.
type CmdServe struct{}

func (CmdServe) Argv() []string { return []string{"serve"} }

// SessionVar marks every process of a `litterbox run` or `exec` session:
// the host puts it, with the session's own value, in each of the
// session's execs, and kills what carries it when the session ends.
const SessionVar = "LITTERBOX_SESSION"

// CmdSettle tells, a line at a time, when the changes under /src have
// settled: still for Quiet, or changing for Most.
type CmdSettle struct{ Quiet, Most time.Duration }

func (c CmdSettle) Argv() []string {
	return []string{"settle", strconv.FormatInt(c.Quiet.Milliseconds(), 10), strconv.FormatInt(c.Most.Milliseconds(), 10)}
}

func parseSettle(a []string) (Command, error) {
	quiet, err := millis(a[0])
	if err != nil {
		return nil, err
	}
	most, err := millis(a[1])
	if err != nil {
		return nil, err
	}
	return CmdSettle{Quiet: quiet, Most: most}, nil
}

// millis reads a count of milliseconds that a time.Duration can hold; a
// larger one would wrap round to a negative wait.
func millis(s string) (time.Duration, error) {
	n, err := count(s)
	if err != nil || n > int(math.MaxInt64/int64(time.Millisecond)) {
		return 0, fmt.Errorf("not a count of milliseconds: %q", s)
	}
	return time.Duration(n) * time.Millisecond, nil
}

// CmdSized runs Cmd once the terminal on stdin has a size.
type CmdSized struct{ Cmd []string }

func (c CmdSized) Argv() []string { return append([]string{"sized"}, c.Cmd...) }

func parseSized(a []string) (Command, error) {
	if len(a) == 0 {
		return nil, errSynopsis
	}
	return CmdSized{Cmd: slices.Clone(a)}, nil
}

// CmdAwake starts PID 1's idle clock, as a call's first question does.
type CmdAwake struct{}

func (CmdAwake) Argv() []string { return []string{"awake"} }

// CmdProbe reports what the sandbox offers, as a Probe, and where Program
// (an agent's) is found in its PATH when set.
type CmdProbe struct{ Program string }

func (c CmdProbe) Argv() []string {
	if c.Program == "" {
		return []string{"probe"}
	}
	return []string{"probe", c.Program}
}

func parseProbe(a []string) (Command, error) {
	switch len(a) {
	case 0:
		return CmdProbe{}, nil
	case 1:
		if a[0] != "" {
			return CmdProbe{Program: a[0]}, nil
		}
	}
	return nil, errSynopsis
}

// CmdVersion prints the protocol version.
type CmdVersion struct{}

func (CmdVersion) Argv() []string { return []string{"version"} }

// CmdCat prints a file of at most Max bytes.
type CmdCat struct {
	Path string
	Max  int
}

func (c CmdCat) Argv() []string { return []string{"cat", c.Path, strconv.Itoa(c.Max)} }

func parseCat(a []string) (Command, error) {
	n, err := count(a[1])
	return CmdCat{a[0], n}, err
}

// CmdRead prints Limit lines of a file from line Offset, at most MaxBytes of
// them, as a ReadOut.
type CmdRead struct {
	Path                    string
	Offset, Limit, MaxBytes int
}

func (c CmdRead) Argv() []string {
	return []string{"read", c.Path, strconv.Itoa(c.Offset), strconv.Itoa(c.Limit), strconv.Itoa(c.MaxBytes)}
}

func parseRead(a []string) (Command, error) {
	n, err := counts(a[1:]...)
	if err != nil {
		return nil, err
	}
	return CmdRead{a[0], n[0], n[1], n[2]}, nil
}

// CmdLs prints at most Max entries under Path as LsEntry values.
type CmdLs struct {
	Path      string
	Recursive bool
	Max       int
}

func (c CmdLs) Argv() []string { return []string{"ls", c.Path, flag(c.Recursive), strconv.Itoa(c.Max)} }

func parseLs(a []string) (Command, error) {
	n, err := count(a[2])
	return CmdLs{a[0], a[1] == "1", n}, err
}

// CmdGlob prints at most Max files under Path matching a ** Pattern, as
// LsEntry values.
type CmdGlob struct {
	Path, Pattern string
	Max           int
}

func (c CmdGlob) Argv() []string { return []string{"glob", c.Path, c.Pattern, strconv.Itoa(c.Max)} }

func parseGlob(a []string) (Command, error) {
	n, err := count(a[2])
	return CmdGlob{a[0], a[1], n}, err
}

// CmdGrep prints at most Max lines matching Regexp in the files under Path
// whose names match Include (all when empty), as Match values.
type CmdGrep struct {
	Path, Regexp, Include string
	Max                   int
}

func (c CmdGrep) Argv() []string {
	return []string{"grep", c.Path, c.Regexp, c.Include, strconv.Itoa(c.Max)}
}

func parseGrep(a []string) (Command, error) {
	n, err := count(a[3])
	return CmdGrep{a[0], a[1], a[2], n}, err
}

// CmdTar writes a tar of Path to stdout.
type CmdTar struct{ Path string }

func (c CmdTar) Argv() []string { return []string{"tar", c.Path} }

// CmdCopy copies each tree From into the directory To, but the
// NUL-separated paths on stdin (relative to the first From), and prints
// what it copied: a sandbox's volumes in one container.
type CmdCopy struct{ Pairs []CopyPair }

// CopyPair is one tree of a copy.
type CopyPair struct{ From, To string }

func (c CmdCopy) Argv() []string {
	a := []string{"copy"}
	for _, p := range c.Pairs {
		a = append(a, p.From, p.To)
	}
	return a
}

func parseCopy(a []string) (Command, error) {
	if len(a) == 0 || len(a)%2 != 0 {
		return nil, errSynopsis
	}
	var c CmdCopy
	for i := 0; i < len(a); i += 2 {
		c.Pairs = append(c.Pairs, CopyPair{a[i], a[i+1]})
	}
	return c, nil
}

// CmdCopyLayer makes To, a new overlay over the lower layers of Merged
// (the overlay of Upper over them), hold what Merged holds, copying only
// what Upper holds; then copies Pairs as CmdCopy does (nothing skipped),
// and prints what it copied: a fork of a sandbox over a base tree.
type CmdCopyLayer struct {
	Upper, Merged, To string
	Pairs             []CopyPair
}

func (c CmdCopyLayer) Argv() []string {
	return append([]string{"copy-layer", c.Upper, c.Merged, c.To}, CmdCopy{c.Pairs}.Argv()[1:]...)
}

func parseCopyLayer(a []string) (Command, error) {
	if len(a) < 3 || len(a)%2 != 1 {
		return nil, errSynopsis
	}
	c := CmdCopyLayer{Upper: a[0], Merged: a[1], To: a[2]}
	if len(a) > 3 {
		pairs, err := parseCopy(a[3:])
		if err != nil {
			return nil, err
		}
		c.Pairs = pairs.(CmdCopy).Pairs
	}
	return c, nil
}

// CmdPut writes stdin to Path.
type CmdPut struct{ Path string }

func (c CmdPut) Argv() []string { return []string{"put", c.Path} }

// CmdRm removes Path.
type CmdRm struct{ Path string }

func (c CmdRm) Argv() []string { return []string{"rm", c.Path} }

// CmdUntar extracts the tar on stdin into Dir.
type CmdUntar struct{ Dir string }

func (c CmdUntar) Argv() []string { return []string{"untar", c.Dir} }

// CmdProxy serves the egress proxy on Addr for Allow (a,b,*.c:443), kept as
// the one argument it is: the proxy reads the list itself. With Control,
// it takes the secrets it injects on that socket (see CmdInject).
type CmdProxy struct{ Addr, Allow, Control string }

func (c CmdProxy) Argv() []string {
	if c.Control == "" {
		return []string{"proxy", c.Addr, c.Allow}
	}
	return []string{"proxy", c.Addr, c.Allow, c.Control}
}

func parseProxy(a []string) (Command, error) {
	switch {
	case len(a) == 2:
		return CmdProxy{Addr: a[0], Allow: a[1]}, nil
	case len(a) == 3 && a[2] != "":
		return CmdProxy{Addr: a[0], Allow: a[1], Control: a[2]}, nil
	}
	return nil, errSynopsis
}

// CmdInject gives the egress proxy listening on Control the secrets on
// stdin (an egress.Secrets message): run in the proxy's container, whose
// network namespace alone reaches Control, an abstract socket.
type CmdInject struct{ Control string }

func (c CmdInject) Argv() []string { return []string{"inject", c.Control} }

// CmdPrepare gives each of Dirs (a sandbox's volumes) to the user UID
// (run as root).
type CmdPrepare struct {
	UID  string
	Dirs []string
}

func (c CmdPrepare) Argv() []string { return append([]string{"prepare", c.UID}, c.Dirs...) }

func parsePrepare(a []string) (Command, error) {
	if len(a) < 2 {
		return nil, errSynopsis
	}
	return CmdPrepare{a[0], a[1:]}, nil
}

// CmdKill kills every process whose environment holds Mark (NAME=VALUE),
// and the processes below them.
type CmdKill struct{ Mark string }

func (c CmdKill) Argv() []string { return []string{"kill", c.Mark} }

func parseKill(a []string) (Command, error) {
	if !strings.Contains(a[0], "=") {
		return nil, errors.New("kill takes NAME=VALUE")
	}
	return CmdKill{a[0]}, nil
}

// CmdWithEnv runs Cmd in Dir (if not empty) with Env (NAME=VALUE each) and,
// with Secrets, the pairs on stdin (LENGTH\n, then NUL-separated
// NAME=VALUE), detached with Detach: kubectl exec has no -e, -w or -d.
type CmdWithEnv struct {
	Detach  bool
	Dir     string
	Secrets bool
	Env     []string // nil when empty
	Cmd     []string
}

func (c CmdWithEnv) Argv() []string {
	a := append([]string{"with-env", flag(c.Detach), c.Dir, flag(c.Secrets)}, c.Env...)
	return append(append(a, "--"), c.Cmd...)
}

func parseWithEnv(a []string) (Command, error) {
	sep := slices.Index(a, "--")
	if sep < 3 || sep == len(a)-1 {
		return nil, errSynopsis
	}
	c := CmdWithEnv{Detach: a[0] == "1", Dir: a[1], Secrets: a[2] == "1", Cmd: slices.Clone(a[sep+1:])}
	for _, kv := range a[3:sep] {
		if !strings.Contains(kv, "=") {
			return nil, errors.New("with-env: " + strconv.Quote(kv) + " is no NAME=VALUE")
		}
		c.Env = append(c.Env, kv)
	}
	return c, nil
}
