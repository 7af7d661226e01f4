//go:build linux

// Package helper is Litterbox's program inside a sandbox. The host copies
// it into every container (see sandbox's helper delivery) and runs it with
// `docker exec`: as PID 1 (init), for an agent call that changes files (act,
// speaking package protocol on stdin and stdout), and for the read-only file
// tools. It needs nothing from the image: no shell, no coreutils, no libc.
//
// It runs as the sandbox user, and an agent may replace it: the host trusts
// nothing it says.
package helper

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/litterbox-dev/litterbox/internal/egress"
	"github.com/litterbox-dev/litterbox/internal/helper/inotify"
	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/internal/helper/search"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// Main runs the helper with args (without the program name) and returns its
// exit code.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, protocol.Usage)
		return protocol.ExitUsage
	}
	limitHeap()
	return exitOf(dispatch(args, os.Stdin, os.Stdout), os.Stderr)
}

type exitCode int

func (e exitCode) Error() string { return "exit " + strconv.Itoa(int(e)) }

// dispatch runs one command line; the protocol package reads it, so its
// arity and order are the host's.
func dispatch(args []string, stdin io.Reader, stdout io.Writer) error {
	cmd, err := protocol.ParseCommand(args)
	if err != nil {
		return &protocol.ToolError{Code: protocol.ExitUsage, Msg: err.Error()}
	}
	switch c := cmd.(type) {
	case protocol.CmdWithEnv:
		f, ok := stdin.(*os.File)
		if !ok {
			return errors.New("with-env reads its stdin as a file")
		}
		return withEnv(c, f)
	case protocol.CmdInit:
		initLoop(c)
	case protocol.CmdAct:
		if code := act(stdin, stdout); code != 0 {
			return exitCode(code)
		}
	case protocol.CmdServe:
		return serve(stdin, stdout)
	case protocol.CmdCat:
		return search.Cat(stdout, c.Path, int64(c.Max))
	case protocol.CmdRead:
		out, err := search.Read(c.Path, c.Offset, c.Limit, c.MaxBytes)
		return printResult(stdout, out, err)
	case protocol.CmdLs:
		out, err := search.Ls(c.Path, c.Recursive, c.Max)
		return printResult(stdout, out, err)
	case protocol.CmdGlob:
		out, err := search.Glob(c.Path, c.Pattern, c.Max)
		return printResult(stdout, out, err)
	case protocol.CmdGrep:
		out, err := search.Grep(c.Path, c.Regexp, c.Include, c.Max)
		return printResult(stdout, out, err)
	case protocol.CmdTar:
		return writeTar(stdout, c.Path)
	case protocol.CmdCopy:
		return copyCmd(c, stdin, stdout)
	case protocol.CmdCopyLayer:
		return copyLayerCmd(c, stdout)
	case protocol.CmdPut:
		return writeFile(c.Path, stdin)
	case protocol.CmdUntar:
		return untar(c.Dir, stdin)
	case protocol.CmdRm:
		return os.Remove(c.Path)
	case protocol.CmdPrepare:
		for _, d := range c.Dirs {
			if err := prepare(d, c.UID); err != nil {
				return err
			}
		}
		return nil
	case protocol.CmdKill:
		procgroup.KillMarked(c.Mark)
	case protocol.CmdSettle:
		return settle(c, stdin, stdout)
	case protocol.CmdSized:
		return sized(c.Cmd)
	case protocol.CmdAwake:
		inotify.Ask(&protocol.WatchCut{Peek: true})
	case protocol.CmdProbe:
		return printJSON(stdout, probe(c.Program))
	case protocol.CmdProxy:
		return proxy(c, stdout)
	case protocol.CmdInject:
		return egress.Inject(c.Control, stdin, stdout)
	case protocol.CmdVersion:
		fmt.Fprintln(stdout, protocol.Version)
	}
	return nil
}

// proxy serves the egress proxy for c.Allow (comma-separated allowlist
// entries); a malformed entry is a usage error.
func proxy(c protocol.CmdProxy, stdout io.Writer) error {
	var entries []string
	if c.Allow != "" {
		entries = strings.Split(c.Allow, ",")
	}
	list, err := egress.Parse(entries)
	if err != nil {
		return &protocol.ToolError{Code: protocol.ExitUsage, Msg: err.Error()}
	}
	return egress.Serve(c.Addr, list, c.Control, stdout)
}

// printResult prints a tool's output as JSON, or returns its error.
func printResult(stdout io.Writer, v any, err error) error {
	if err != nil {
		return err
	}
	return printJSON(stdout, v)
}

// copyCmd copies trees but the paths stdin lists, which are the first
// tree's (the tracked files of /src), and prints the totals.
func copyCmd(c protocol.CmdCopy, stdin io.Reader, stdout io.Writer) error {
	list, err := io.ReadAll(stdin)
	if err != nil {
		return err
	}
	skip := map[string]bool{}
	for _, p := range strings.Split(string(list), "\x00") {
		if p != "" {
			skip[p] = true
		}
	}
	st, err := copyPairs(c.Pairs, skip)
	if err != nil {
		return err
	}
	return printJSON(stdout, st)
}

// copyLayerCmd copies a fork's /src layer, then its other trees.
func copyLayerCmd(c protocol.CmdCopyLayer, stdout io.Writer) error {
	st, err := copyLayer(c.Upper, c.Merged, c.To)
	if err != nil {
		return err
	}
	more, err := copyPairs(c.Pairs, nil)
	if err != nil {
		return err
	}
	st = st.add(more)
	return printJSON(stdout, st)
}

// copyPairs copies each pair's tree, skipping skip's paths in the first.
func copyPairs(pairs []protocol.CopyPair, skip map[string]bool) (CopyStats, error) {
	var all CopyStats
	for i, p := range pairs {
		if i > 0 {
			skip = nil
		}
		// A cache entry's trees are directories of its volume.
		if err := os.MkdirAll(p.To, 0o755); err != nil {
			return all, err
		}
		st, err := copyTree(p.From, p.To, skip)
		if err != nil {
			return all, err
		}
		all = all.add(st)
	}
	return all, nil
}

// initThreads and actThreads are the idle threads PID 1 and an agent call
// keep in reserve: more than either has goroutines that block in system
// calls at once.
const (
	initThreads = 12
	actThreads  = 6
)

// initLoop is PID 1: it reaps every orphan the sandbox's processes leave.
// It ignores every signal the sandbox user could send it (see pid1Ignored):
// the container stops by SIGKILL from outside (docker rm -f, kubectl delete
// with a grace period of 1 s).
func initLoop(c protocol.CmdInit) {
	// PID 1 does little work; one P and a reserve of threads keep it alive
	// when the sandbox's pids run out (see reserveThreads).
	runtime.GOMAXPROCS(1)
	reserveThreads(initThreads)
	signal.Ignore(pid1Ignored...)
	w := inotify.New(root)
	w.CountVolumes(c.Volumes)
	go w.Serve()
	if c.Idle > 0 {
		go idleStop(w, c.Idle)
	}
	if s := os.Getenv("LITTERBOX_EGRESS"); s != "" {
		go func() {
			err := egress.Forward("127.0.0.1:"+protocol.EgressPort, s)
			fmt.Fprintln(os.Stderr, protocol.Name+": egress:", err)
		}()
	}
	go w.Measure(30 * time.Second)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGCHLD)
	for range sigs {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}

// pid1Ignored are the signals PID 1 ignores. The helper runs as PID 1 with
// the sandbox user's uid, so an agent's command may signal it. The kernel
// drops a signal sent to a PID namespace's init from inside it when the
// init has no handler for it (and never delivers SIGKILL or SIGSTOP), but
// the Go runtime installs a handler for every signal: SIGTERM, SIGINT and
// SIGHUP would end it, SIGQUIT, SIGABRT, SIGILL, SIGTRAP, SIGSYS and
// SIGSTKFLT make it dump its goroutines and exit, and so do SIGSEGV, SIGBUS
// and SIGFPE sent with kill(2). Ignored (the runtime drops a user-sent one
// of those it was told to ignore), none of them does anything. SIGCHLD is
// never among them: PID 1 reaps with it.
var pid1Ignored = []os.Signal{
	syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGILL, syscall.SIGTRAP,
	syscall.SIGABRT, syscall.SIGBUS, syscall.SIGFPE, syscall.SIGUSR1, syscall.SIGSEGV,
	syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM, syscall.SIGTERM, syscall.SIGSTKFLT,
	syscall.SIGXCPU, syscall.SIGXFSZ, syscall.SIGVTALRM, syscall.SIGIO, syscall.SIGPWR,
	syscall.SIGSYS,
}

// prepare opens the copy's directory to the sandbox user: the volume's root
// belongs to root. Podman gives it to the user already, and root without
// capabilities may not chmod it then: that is fine too.
func prepare(dir, uid string) error {
	if err := os.Chmod(dir, 0o777); err == nil {
		return nil
	}
	// Kubernetes runs every exec as the pod's user, never root: a volume
	// the cluster made writable for it (fsGroup, or a world-writable
	// directory) is already given.
	if syscall.Access(dir, 2) == nil {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return err
	}
	if strconv.FormatUint(uint64(st.Uid), 10) == uid {
		return nil
	}
	return fmt.Errorf("%s belongs to uid %d and cannot be given to uid %s", dir, st.Uid, uid)
}

func probe(program string) *protocol.Probe {
	p := &protocol.Probe{Version: protocol.Version, Arch: runtime.GOARCH, User: os.Getuid(), Kernel: kernelRelease()}
	if program != "" {
		p.Program, p.Path = procgroup.Find(program), os.Getenv("PATH")
	}
	_, err := os.Stat("/bin/sh")
	p.Shell = err == nil
	p.TmpWrite = writable("/tmp")
	p.SrcWrite = writable(root)
	p.TmpExec = true
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) > 5 && f[4] == "/tmp" && strings.Contains(","+f[5]+",", ",noexec,") {
				p.TmpExec, p.TmpDetail = false, "/tmp is mounted noexec"
			}
		}
	}
	return p
}

func writable(dir string) bool {
	f, err := os.CreateTemp(dir, ".litterbox-probe-*")
	if err != nil {
		return false
	}
	f.Close()
	os.Remove(f.Name())
	return true
}

// kernelRelease is uname -r.
func kernelRelease() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return ""
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
