package runner

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/shlex"
	"github.com/sirupsen/logrus"
)

func TestQuoteRoundTripsThroughShlex(t *testing.T) {
	args := [][]string{
		{"docker", "run", "--label", "dev.litterbox.repo=/tmp/my repo", "busybox:latest"},
		{"git", "commit-tree", "-m", "it's \"quoted\" $HOME `x` \\ back", "abc"},
		{"sh", "-c", "echo hello world; exit 3"},
		{"echo", "", "a\tb", "new\nline", "*", "~", "#hash", "a=b", "ünïcode"},
	}
	for _, argv := range args {
		line := Join(argv)
		got, err := shlex.Split(line)
		if err != nil {
			t.Fatalf("shlex.Split(%q): %v", line, err)
		}
		if strings.Join(got, "\x00") != strings.Join(argv, "\x00") || len(got) != len(argv) {
			t.Errorf("round trip of %q:\n got %q\nwant %q", line, got, argv)
		}
	}
}

func TestQuoteLeavesPlainWordsAlone(t *testing.T) {
	for in, want := range map[string]string{
		"busybox:latest":         "busybox:latest",
		"refs/heads/litterbox/x": "refs/heads/litterbox/x",
		"a b":                    "'a b'",
		"it's":                   `'it'\''s'`,
		"":                       "''",
		"--filter=label=a=b":     "--filter=label=a=b",
		"$HOME":                  "'$HOME'",
	} {
		if got := Quote(in); got != want {
			t.Errorf("Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestShellLineShowsDirAndMasksSecrets(t *testing.T) {
	line := ShellLine(Cmd{Name: "git", Args: []string{"status"}, Dir: "/a b", Env: []string{"GIT_INDEX_FILE=/x", "GH_TOKEN=hunter2"}})
	want := "cd '/a b' && GIT_INDEX_FILE=/x GH_TOKEN='***' git status"
	if line != want {
		t.Errorf("got %s\nwant %s", line, want)
	}
}

func quiet() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func TestExecCapturesOutputAndExitCode(t *testing.T) {
	r := NewExec(quiet())
	res, err := r.Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", "echo out; echo err >&2; exit 3"}})
	ee, ok := AsExit(err)
	if !ok {
		t.Fatalf("want *ExitError, got %v", err)
	}
	if ee.Result.ExitCode != 3 || res.ExitCode != 3 {
		t.Errorf("exit code %d/%d, want 3", ee.Result.ExitCode, res.ExitCode)
	}
	if string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" {
		t.Errorf("stdout %q stderr %q", res.Stdout, res.Stderr)
	}
	if !strings.Contains(err.Error(), "exited with code 3: err") || !strings.HasPrefix(err.Error(), "`sh` exited") {
		t.Errorf("error text %q does not carry the exit code and stderr", err)
	}
}

func TestExecMissingBinaryIsStartError(t *testing.T) {
	_, err := NewExec(quiet()).Run(context.Background(), Cmd{Name: "litterbox-no-such-binary"})
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("want *StartError, got %T %v", err, err)
	}
}

// A detached program outlives the call: Run returns before it ends, and it
// runs in a session of its own, so a terminal's Ctrl-C or hangup for the
// caller never reaches it.
func TestExecDetachReturnsAtOnce(t *testing.T) {
	dir := t.TempDir()
	done := filepath.Join(dir, "done")
	start := time.Now()
	_, err := NewExec(quiet()).Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", "sleep 1; cut -d' ' -f6 /proc/$$/stat > " + done}, Detach: true})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("a detached run took %v", took)
	}
	if _, err := os.Stat(done); err == nil {
		t.Fatal("the program had ended before Run returned")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		data, err := os.ReadFile(done)
		if err == nil && len(strings.TrimSpace(string(data))) > 0 {
			sid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			if sid == 0 || sid == mySid(t) {
				t.Fatalf("the program ran in session %d, the caller's", sid)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the detached program never ran to its end")
		}
	}
}

// mySid is this process's session, from /proc (field 6 of stat; the
// test binary's name has no space).
func mySid(t *testing.T) int {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Fatal(err)
	}
	sid, _ := strconv.Atoi(strings.Fields(string(data))[5])
	return sid
}

func TestExecCancellationStopsTheProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := NewExec(quiet()).Run(ctx, Cmd{Name: "sleep", Args: []string{"30"}})
	if err == nil {
		t.Fatal("cancelled command reported success")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap the context error", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cancellation took %v", took)
	}
}

func TestExecStreamsStdinToStdout(t *testing.T) {
	var out bytes.Buffer
	big := bytes.Repeat([]byte("0123456789"), 1<<20)
	res, err := NewExec(quiet()).Run(context.Background(), Cmd{Name: "cat", Stdin: bytes.NewReader(big), Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Stdout) != 0 || !bytes.Equal(out.Bytes(), big) {
		t.Errorf("streamed %d bytes, captured %d; want %d streamed, 0 captured", out.Len(), len(res.Stdout), len(big))
	}
}

// script is what the README's one-liner, sed -n 's/^[$>] //p', makes of
// a log.
func script(log string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if rest, ok := strings.CutPrefix(l, "$ "); ok {
			out = append(out, rest)
		} else if rest, ok := strings.CutPrefix(l, "> "); ok {
			out = append(out, rest)
		}
	}
	return strings.Join(out, "\n")
}

// The debug log is a shell session: each command a line that, pasted
// (prompts stripped), runs it again with the same arguments, newlines and
// quotes included; and an equivalent shown line, with its input, does the
// same as the command it stands for.
func TestExecLogsPasteableLines(t *testing.T) {
	var buf bytes.Buffer
	l := logrus.New()
	l.SetOutput(&buf)
	l.SetFormatter(LogFormatter{})
	l.SetLevel(logrus.DebugLevel)
	dir := filepath.Join(t.TempDir(), "a && b")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	odd := "it's \"two\"\nlines $HOME `x` \\ end"
	e := NewExec(l)
	first, err := e.Run(context.Background(), Cmd{Name: "printf", Args: []string{"%s|", odd, "second"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	// A command whose own line speaks a protocol, shown as its equivalent.
	_, err = e.Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", "cat > out.txt"}, Dir: dir, Stdin: strings.NewReader(odd),
		Shown: &Shown{Cmd: Cmd{Name: "sh", Args: []string{"-c", "cat > shown.txt"}, Dir: dir}, Input: []byte(odd), HasInput: true, Note: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	log := buf.String()
	if !regexp.MustCompile(`(?m)^\$ cd .* && printf .*\n> .*  # exit 0, \d+ ms$`).MatchString(log) {
		t.Errorf("log:\n%s", log)
	}
	if !strings.Contains(log, "; ran as: cd "+Quote(dir)+" && sh -c 'cat > out.txt'; test\n") {
		t.Errorf("no note naming the command itself:\n%s", log)
	}
	again, err := e.Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", script(log)}})
	if err != nil {
		t.Fatalf("the pasted log failed: %v\n%s", err, script(log))
	}
	if !bytes.HasPrefix(again.Stdout, first.Stdout) {
		t.Errorf("pasted printf printed %q, want %q", again.Stdout, first.Stdout)
	}
	if shown, _ := os.ReadFile(filepath.Join(dir, "shown.txt")); string(shown) != odd {
		t.Errorf("the shown line wrote %q, want %q", shown, odd)
	}
}

// Logged marks every line of a command that spans lines, so none of them
// reads as a line of its own.
func TestLoggedContinuesLines(t *testing.T) {
	got := Logged("a 'b\nc'", 1, 1500*time.Millisecond, "note")
	if want := "$ a 'b\n> c'  # exit 1, 1500 ms; note"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	subst := Subst{dir: "$TMP"}
	rec := &Recorder{Inner: NewExec(quiet()), Subst: subst}
	ctx := context.Background()
	_, _ = rec.Run(ctx, Cmd{Name: "echo", Args: []string{dir}})
	_, _ = rec.Run(ctx, Cmd{Name: "sh", Args: []string{"-c", "cat; exit 4"}, Stdin: strings.NewReader("in")})
	path := filepath.Join(dir, "t.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}

	other := t.TempDir()
	rep, err := LoadReplayer(path, Subst{other: "$TMP"})
	if err != nil {
		t.Fatal(err)
	}
	// Served out of order: matching is by argv, not position.
	res, err := rep.Run(ctx, Cmd{Name: "sh", Args: []string{"-c", "cat; exit 4"}, Stdin: strings.NewReader("in")})
	if ee, ok := AsExit(err); !ok || ee.Result.ExitCode != 4 || string(res.Stdout) != "in" {
		t.Errorf("replayed sh: res %+v err %v", res, err)
	}
	res, err = rep.Run(ctx, Cmd{Name: "echo", Args: []string{other}})
	if err != nil || string(res.Stdout) != other+"\n" {
		t.Errorf("replayed echo: %q %v (placeholders not mapped back)", res.Stdout, err)
	}
	if p := rep.Problems(); len(p) != 0 {
		t.Errorf("unexpected problems: %v", p)
	}
}

func TestReplayReportsUnexpectedAndMissing(t *testing.T) {
	dir := t.TempDir()
	rec := &Recorder{Inner: NewExec(quiet())}
	_, _ = rec.Run(context.Background(), Cmd{Name: "true"})
	_, _ = rec.Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", "cat"}, Stdin: strings.NewReader("a")})
	path := filepath.Join(dir, "t.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	rep, _ := LoadReplayer(path, nil)
	if _, err := rep.Run(context.Background(), Cmd{Name: "false"}); err == nil {
		t.Error("unexpected command was served")
	}
	// Same argv, different stdin: served, and reported.
	_, _ = rep.Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", "cat"}, Stdin: strings.NewReader("b")})
	p := rep.Problems()
	if len(p) != 3 || !strings.HasPrefix(p[0], "unexpected command: false") || !strings.HasPrefix(p[1], "different stdin for: sh -c cat") || !strings.HasPrefix(p[2], "expected command never ran: true") {
		t.Fatalf("want unexpected, different stdin, missing; got %q", p)
	}
}

func TestFaultFailsTheNthMatch(t *testing.T) {
	f := &Fault{Inner: NewExec(quiet()), Match: "echo", N: 2}
	ctx := context.Background()
	if _, err := f.Run(ctx, Cmd{Name: "echo", Args: []string{"1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Run(ctx, Cmd{Name: "true"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Run(ctx, Cmd{Name: "echo", Args: []string{"2"}}); err == nil {
		t.Fatal("second echo should have failed")
	}
	if !f.Fired() || f.Seen() != 2 {
		t.Errorf("fired %v seen %d", f.Fired(), f.Seen())
	}
}

func TestRecordKeepsBinaryOutputByteForByte(t *testing.T) {
	dir := t.TempDir()
	rec := &Recorder{Inner: NewExec(quiet())}
	want := "a\x00b\xff\xfe"
	var out bytes.Buffer
	if _, err := rec.Run(context.Background(), Cmd{Name: "printf", Args: []string{`a\000b\377\376`}, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "t.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	rep, _ := LoadReplayer(path, nil)
	var got bytes.Buffer
	if _, err := rep.Run(context.Background(), Cmd{Name: "printf", Args: []string{`a\000b\377\376`}, Stdout: &got}); err != nil {
		t.Fatal(err)
	}
	if got.String() != want || out.String() != want {
		t.Errorf("replayed %q, ran %q, want %q", got.String(), out.String(), want)
	}
}

func TestVerb(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"docker", "run", "-d", "--name", "x"}, "docker run"},
		{[]string{"docker", "volume", "rm", "v"}, "docker volume rm"},
		{[]string{"git", "-C", "/r", "-c", "a=b", "archive", "--format=tar"}, "git archive"},
		{[]string{"docker", "--context", "remote", "ps", "-a"}, "docker ps"},
		{[]string{"docker", "--host=tcp://h:1", "exec", "-i", "c"}, "docker exec"},
		{[]string{"true"}, "true"},
	} {
		if got := Verb(Cmd{Name: tc.argv[0], Args: tc.argv[1:]}); got != tc.want {
			t.Errorf("Verb(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}

func TestReplayServesAConversation(t *testing.T) {
	// A command that answers, waits for more input, then answers again: the
	// replayer must not wait for all of stdin before serving stdout.
	dir := t.TempDir()
	rec := &Recorder{Inner: NewExec(quiet())}
	script := "echo question; read a; echo got $a"
	converse := func(r Runner) string {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan struct{})
		go func() {
			_, _ = r.Run(context.Background(), Cmd{Name: "sh", Args: []string{"-c", script}, Stdin: inR, Stdout: outW})
			outW.Close()
			close(done)
		}()
		buf := make([]byte, 9)
		_, _ = io.ReadFull(outR, buf)
		_, _ = io.WriteString(inW, "answer\n")
		inW.Close()
		rest, _ := io.ReadAll(outR)
		<-done
		return string(buf) + string(rest)
	}
	if got := converse(rec); got != "question\ngot answer\n" {
		t.Fatalf("recorded %q", got)
	}
	path := filepath.Join(dir, "t.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	rep, _ := LoadReplayer(path, nil)
	if got := converse(rep); got != "question\ngot answer\n" {
		t.Errorf("replayed %q", got)
	}
	if p := rep.Problems(); len(p) != 0 {
		t.Errorf("problems %q", p)
	}
}

func TestAuditRecordsOnlyCommandsOfItsTrail(t *testing.T) {
	r := Audit{Inner: NewExec(quiet())}
	trail := &Trail{}
	ctx := WithTrail(context.Background(), trail)
	if _, err := r.Run(ctx, Cmd{Name: "sh", Args: []string{"-c", "exit 0"}, Stdin: strings.NewReader("secret")}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, Cmd{Name: "sh", Args: []string{"-c", "exit 3"}}); err == nil {
		t.Fatal("exit 3 was not an error")
	}
	// A shown line's input (a written file's content) is no more kept.
	if _, err := r.Run(ctx, Cmd{Name: "true", Shown: &Shown{Cmd: Cmd{Name: "tee", Args: []string{"f"}}, Input: []byte("secret"), HasInput: true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background(), Cmd{Name: "true"}); err != nil {
		t.Fatal(err)
	}
	cmds := trail.Commands()
	if len(cmds) != 3 || cmds[0].Line != "sh -c 'exit 0'" || cmds[0].ExitCode != 0 || cmds[1].ExitCode != 3 ||
		cmds[2].Line != "tee f" || cmds[2].Note != "ran as: true; its 6 bytes of input not kept" {
		t.Fatalf("trail %+v", cmds)
	}
	for _, c := range cmds {
		if strings.Contains(c.Line+c.Note, "secret") {
			t.Fatalf("stdin leaked into the audit: %+v", c)
		}
	}
}

// A command with a StdinKey is matched by what its key keeps of stdin: other
// bytes that mean the same pass, a different meaning is reported with both
// sides.
func TestReplayMatchesStdinByKey(t *testing.T) {
	key := func(b []byte) string { return strings.Join(strings.Fields(string(b)), " ") + "\n" }
	rec := &Recorder{Inner: NewExec(quiet())}
	cmd := func(stdin string) Cmd {
		return Cmd{Name: "cat", Stdin: strings.NewReader(stdin), StdinKey: key}
	}
	if _, err := rec.Run(context.Background(), cmd("write  a.txt\n")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	for stdin, ok := range map[string]bool{"write a.txt": true, " write\ta.txt ": true, "write b.txt": false} {
		rep, _ := LoadReplayer(path, nil)
		if _, err := rep.Run(context.Background(), cmd(stdin)); err != nil {
			t.Fatal(err)
		}
		p := rep.Problems()
		if ok != (len(p) == 0) || (!ok && !strings.Contains(p[0], "recorded:\n    write a.txt\n  given:\n    write b.txt")) {
			t.Errorf("stdin %q: problems %q", stdin, p)
		}
	}
}

// A carried command starts nothing: Exec logs it with the outcome it
// carries, Audit keeps it in the trail with the carried duration, and the
// counter, the recorder and the replayer pass it by.
func TestCarriedStartsNothing(t *testing.T) {
	var buf bytes.Buffer
	l := logrus.New()
	l.SetOutput(&buf)
	l.SetFormatter(LogFormatter{})
	l.SetLevel(logrus.DebugLevel)
	marker := filepath.Join(t.TempDir(), "ran")
	c := Cmd{Name: "touch", Args: []string{marker}, Carried: &Result{ExitCode: 3, Duration: 1500 * time.Millisecond}}
	counter := &Counter{Inner: NewExec(l)}
	trail := &Trail{}
	res, err := Audit{Inner: counter}.Run(WithTrail(context.Background(), trail), c)
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("a carried command ran")
	}
	if got := trail.Commands(); len(got) != 1 || got[0].ExitCode != 3 || got[0].DurationMS != 1500 || got[0].Line != "touch "+Quote(marker) {
		t.Errorf("trail %+v", got)
	}
	if !strings.Contains(buf.String(), "# exit 3, 1500 ms") {
		t.Errorf("log %q", buf.String())
	}
	if n := counter.Count("touch"); n != 0 {
		t.Errorf("counted %d processes", n)
	}
	rec := &Recorder{Inner: NewExec(quiet())}
	if _, err := rec.Run(context.Background(), c); err != nil || len(rec.entries) != 0 {
		t.Errorf("recorded %v %v", rec.entries, err)
	}
	if _, err := (&Replayer{}).Run(context.Background(), c); err != nil {
		t.Errorf("replayer: %v", err)
	}
}
