package protocol

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCommandArgv pins each command's argv, as the host has always sent it,
// and reads it back.
func TestCommandArgv(t *testing.T) {
	for _, tc := range []struct {
		c    Command
		argv string // space-separated
	}{
		{CmdInit{}, "init"},
		{CmdInit{Volumes: []string{"/home/litterbox", "/opt/venv"}}, "init /home/litterbox /opt/venv"},
		{CmdInit{Idle: 30 * time.Minute, Volumes: []string{"/home/litterbox"}}, "init --idle=30m0s /home/litterbox"},
		{CmdAct{}, "act"},
		{CmdCat{"/src/a", 1 << 20}, "cat /src/a 1048576"},
		{CmdRead{"/src/a", 0, 2000, 262144}, "read /src/a 0 2000 262144"},
		{CmdLs{"/src", true, 501}, "ls /src 1 501"},
		{CmdLs{"/src", false, 0}, "ls /src 0 0"},
		{CmdGlob{"/src", "**/*.go", 501}, "glob /src **/*.go 501"},
		{CmdGrep{"/src", "func", "*.go", 501}, "grep /src func *.go 501"},
		{CmdTar{"/src/d"}, "tar /src/d"},
		{CmdCopy{[]CopyPair{{"/from", "/to"}}}, "copy /from /to"},
		{CmdPut{"/src/a"}, "put /src/a"},
		{CmdRm{"/src/a"}, "rm /src/a"},
		{CmdPrepare{"1000", []string{"/src", "/home/litterbox"}}, "prepare 1000 /src /home/litterbox"},
		{CmdCopy{[]CopyPair{{"/src", "/other/src"}, {"/home/litterbox", "/other/home"}}}, "copy /src /other/src /home/litterbox /other/home"},
		{CmdKill{"LITTERBOX_SESSION=x"}, "kill LITTERBOX_SESSION=x"},
		{CmdSettle{1500 * time.Millisecond, 30 * time.Second}, "settle 1500 30000"},
		{CmdAwake{}, "awake"},
		{CmdSized{[]string{"claude", "--resume"}}, "sized claude --resume"},
		{CmdProbe{}, "probe"},
		{CmdProbe{"claude"}, "probe claude"},
		{CmdProxy{"unix:/run/litterbox/egress.sock", "a.com,*.b:443", ""}, "proxy unix:/run/litterbox/egress.sock a.com,*.b:443"},
		{CmdProxy{"unix:/run/litterbox/egress.sock", "a.com", "@litterbox-egress-control"}, "proxy unix:/run/litterbox/egress.sock a.com @litterbox-egress-control"},
		{CmdInject{"@litterbox-egress-control"}, "inject @litterbox-egress-control"},
		{CmdVersion{}, "version"},
		{CmdUntar{"/src"}, "untar /src"},
		{CmdWithEnv{Dir: "/src", Cmd: []string{"sh"}}, "with-env 0 /src 0 -- sh"},
		{CmdWithEnv{true, "", true, []string{"A=1", "B="}, []string{"sh", "-c", "--"}}, "with-env 1  1 A=1 B= -- sh -c --"},
	} {
		argv := tc.c.Argv()
		if got := strings.Join(argv, " "); got != tc.argv {
			t.Errorf("%#v: argv %q, want %q", tc.c, got, tc.argv)
		}
		back, err := ParseCommand(argv)
		if err != nil || !reflect.DeepEqual(back, tc.c) {
			t.Errorf("%q read back as %#v, %v", argv, back, err)
		}
	}
}

// TestEveryCommandIsTested keeps TestCommandArgv and the fuzz seeds covering
// every row of the table.
func TestEveryCommandIsTested(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range validCommands([]string{"a=b"}, 1) {
		seen[c.Argv()[0]] = true
	}
	for _, c := range commands {
		if !seen[c.name] {
			t.Errorf("validCommands makes no %s", c.name)
		}
	}
}

func TestUsageText(t *testing.T) {
	want, err := os.ReadFile("testdata/usage.txt")
	if err != nil {
		t.Fatal(err)
	}
	if Usage+"\n" != string(want) {
		t.Errorf("usage is\n%s\nwant\n%s", Usage, want)
	}
}

// TestCommandRefusals pins the helper's usage errors.
func TestCommandRefusals(t *testing.T) {
	for _, tc := range []struct{ argv, err string }{
		{"", Usage},
		{"nope", "unknown command \"nope\"\n" + Usage},
		{"init x", "init takes [--idle=DURATION] [/DIR...]\n" + Usage},
		{"init --idle=soon", "init takes [--idle=DURATION] [/DIR...]\n" + Usage},
		{"copy /a /b /c", "copy takes FROM TO [FROM TO...]\n" + Usage},
		{"prepare 1000", "prepare takes UID DIR...\n" + Usage},
		{"cat /a", "cat takes 2 arguments\n" + Usage},
		{"read /a 1 2", "read takes 4 arguments\n" + Usage},
		{"ls /a 1 2 3", "ls takes 3 arguments\n" + Usage},
		{"cat /a x", `not a count: "x"`},
		{"cat /a -1", `not a count: "-1"`},
		{"read /a 1 x y", `not a count: "x"`},
		{"ls /a 1 9999999999999999999999", `not a count: "9999999999999999999999"`},
		{"glob /a * -", `not a count: "-"`},
		{"grep /a x y z", `not a count: "z"`},
		{"kill NOEQ", "kill takes NAME=VALUE"},
		{"with-env 0  0 sh", "with-env takes DETACH DIR SECRETS [NAME=VALUE...] -- CMD...\n" + Usage},
		{"with-env 0  0 --", "with-env takes DETACH DIR SECRETS [NAME=VALUE...] -- CMD...\n" + Usage},
		{"with-env 0 -- sh", "with-env takes DETACH DIR SECRETS [NAME=VALUE...] -- CMD...\n" + Usage},
		{"with-env 0  0 NOEQ -- sh", `with-env: "NOEQ" is no NAME=VALUE`},
	} {
		var argv []string
		if tc.argv != "" {
			argv = strings.Split(tc.argv, " ")
		}
		c, err := ParseCommand(argv)
		if err == nil || err.Error() != tc.err {
			t.Errorf("%q: %#v, %v; want %q", tc.argv, c, err, tc.err)
		}
	}
}

// validCommands makes one of each command from s and n, fixed up to be
// what a host may send: counts not negative, NAME=VALUE pairs with their =,
// a command to run, and no directory "--" for with-env, whose first "--"
// ends its environment.
func validCommands(s []string, n int) []Command {
	if len(s) == 0 {
		s = []string{""}
	}
	at := func(i int) string { return s[i%len(s)] }
	if n < 0 {
		n = -(n + 1)
	}
	dir := at(0)
	if dir == "--" {
		dir = ""
	}
	var env []string
	for _, e := range s[1:] {
		if !strings.Contains(e, "=") {
			e += "="
		}
		env = append(env, e)
	}
	return []Command{
		CmdInit{}, CmdAct{}, CmdServe{}, CmdAwake{}, CmdSized{slices.Clone(s)}, CmdSettle{Quiet: 1500 * time.Millisecond, Most: 30 * time.Second}, CmdProbe{}, CmdProbe{at(0)}, CmdVersion{},
		CmdCat{at(0), n}, CmdRead{at(0), n, n / 2, n / 3}, CmdLs{at(0), n%2 == 1, n},
		CmdGlob{at(0), at(1), n}, CmdGrep{at(0), at(1), at(2), n},
		CmdTar{at(0)}, CmdCopy{[]CopyPair{{at(0), at(1)}}}, CmdCopyLayer{at(0), at(1), at(2), nil}, CmdCopyLayer{at(0), at(1), at(2), []CopyPair{{at(1), at(0)}}}, CmdPut{at(0)}, CmdRm{at(0)}, CmdUntar{at(0)},
		CmdProxy{at(0), at(1), ""}, CmdInject{at(0)}, CmdPrepare{at(0), []string{at(1)}}, CmdKill{at(0) + "=" + at(1)},
		CmdWithEnv{n%2 == 1, dir, n%4 >= 2, env, slices.Clone(s)},
	}
}

// FuzzCommand: a command line the helper takes means the command it reads
// and sends back the same, and every command the host can build is read
// back as itself.
func FuzzCommand(f *testing.F) {
	for _, c := range validCommands([]string{"/src", "**/*.go", "A=1", "--"}, 7) {
		f.Add(strings.Join(c.Argv(), "\x00"), 3)
	}
	f.Add("ls\x00/src\x00+1\x00007", 0)
	f.Add("with-env\x00x\x00\x00\x00--\x00--", -5)
	f.Add("settle\x000\x0010000000000000", 0) // wrapped round to a negative wait
	f.Fuzz(func(t *testing.T, line string, n int) {
		args := strings.Split(line, "\x00")
		if c, err := ParseCommand(args); err == nil {
			if again, err := ParseCommand(c.Argv()); err != nil || !reflect.DeepEqual(again, c) {
				t.Errorf("%q read as %#v, whose argv %q reads as %#v, %v", args, c, c.Argv(), again, err)
			}
		}
		for _, c := range validCommands(args, n) {
			if back, err := ParseCommand(c.Argv()); err != nil || !reflect.DeepEqual(back, c) {
				t.Errorf("%#v: argv %q reads as %#v, %v", c, c.Argv(), back, err)
			}
		}
	})
}
