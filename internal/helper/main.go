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

	"github.com/litterbox-dev/litterbox/internal/helper/protocol"
	"github.com/litterbox-dev/litterbox/runner/procgroup"
)

// Name is the helper's file name in the sandbox; the litterbox binary
// behaves as the helper when started under this name.
const Name = "litterbox-helper"

const usage = `usage: litterbox-helper COMMAND [ARG...]
  init                               PID 1 of a sandbox
  act                                one agent call (protocol on stdin/stdout)
  cat PATH MAX                       print a file of at most MAX bytes
  read PATH OFFSET LIMIT MAXBYTES    lines of a file, as JSON
  ls PATH RECURSIVE MAX              entries, as JSON (RECURSIVE 0 or 1)
  glob PATH PATTERN MAX              files matching a ** glob, as JSON
  grep PATH REGEXP INCLUDE MAX       matching lines, as JSON
  tar PATH                           a tar of PATH on stdout
  copy FROM TO                       copy the tree FROM into the directory TO (cp -a),
                                     but the NUL-separated paths on stdin
  put PATH                           write stdin to PATH (an agent's write, as logged)
  rm PATH                            remove PATH (an agent's patch deleting a file)
  prepare DIR UID                    give DIR to UID (run as root)
  kill NAME=VALUE                    kill every process with that variable, and those below
  probe                              what the sandbox offers, as JSON
  proxy ADDR ALLOW                   the egress proxy on ADDR for ALLOW (a,b,*.c:443)
  version                            the protocol version
  untar DIR                          extract the tar on stdin into DIR (docker cp -)
  with-env DETACH DIR SECRETS [NAME=VALUE...] -- CMD...
                                     run CMD in DIR (if not empty) with NAME=VALUE and, when
                                     SECRETS is 1, the pairs on stdin (LENGTH\n then
                                     NUL-separated NAME=VALUE), detached when DETACH is 1
                                     (kubectl exec has no -e, -w, -d)`

// Main runs the helper with args (without the program name) and returns its
// exit code.
func Main(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, usage)
		return exitUsage
	}
	err := dispatch(args[0], args[1:], os.Stdin, os.Stdout)
	var te *toolError
	var ec exitCode
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ec):
		return int(ec)
	case errors.As(err, &te):
		fmt.Fprintln(os.Stderr, te.msg)
		return te.code
	default:
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
}

type exitCode int

func (e exitCode) Error() string { return "exit " + strconv.Itoa(int(e)) }

func dispatch(cmd string, a []string, stdin io.Reader, stdout io.Writer) error {
	if cmd == "with-env" {
		f, ok := stdin.(*os.File)
		if !ok {
			return errors.New("with-env reads its stdin as a file")
		}
		return withEnv(a, f)
	}
	want := map[string]int{"untar": 1, "init": 0, "act": 0, "cat": 2, "read": 4, "ls": 3, "glob": 3, "grep": 4, "put": 1, "rm": 1, "tar": 1, "copy": 2, "prepare": 2, "kill": 1, "probe": 0, "version": 0, "proxy": 2}
	n, ok := want[cmd]
	if !ok {
		return &toolError{exitUsage, "unknown command " + strconv.Quote(cmd) + "\n" + usage}
	}
	if len(a) != n {
		return &toolError{exitUsage, fmt.Sprintf("%s takes %d arguments\n%s", cmd, n, usage)}
	}
	switch cmd {
	case "init":
		initLoop()
	case "act":
		if code := act(stdin, stdout); code != 0 {
			return exitCode(code)
		}
	case "cat":
		max, err := atoi(a[1])
		if err != nil {
			return err
		}
		return cat(stdout, a[0], int64(max))
	case "read":
		var nums [3]int
		for i := range nums {
			var err error
			if nums[i], err = atoi(a[i+1]); err != nil {
				return err
			}
		}
		out, err := read(a[0], nums[0], nums[1], nums[2])
		if err != nil {
			return err
		}
		return printJSON(stdout, out)
	case "ls":
		max, err := atoi(a[2])
		if err != nil {
			return err
		}
		out, err := ls(a[0], a[1] == "1", max)
		if err != nil {
			return err
		}
		return printJSON(stdout, out)
	case "glob":
		max, err := atoi(a[2])
		if err != nil {
			return err
		}
		out, err := glob(a[0], a[1], max)
		if err != nil {
			return err
		}
		return printJSON(stdout, out)
	case "grep":
		max, err := atoi(a[3])
		if err != nil {
			return err
		}
		out, err := grep(a[0], a[1], a[2], max)
		if err != nil {
			return err
		}
		return printJSON(stdout, out)
	case "tar":
		return writeTar(stdout, a[0])
	case "copy":
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
		st, err := copyTree(a[0], a[1], skip)
		if err != nil {
			return err
		}
		return printJSON(stdout, st)
	case "put":
		return writeFile(a[0], stdin)
	case "untar":
		return untar(a[0], stdin)
	case "rm":
		return os.Remove(a[0])
	case "prepare":
		return prepare(a[0], a[1])
	case "kill":
		if !strings.Contains(a[0], "=") {
			return &toolError{exitUsage, "kill takes NAME=VALUE"}
		}
		procgroup.KillMarked(a[0])
	case "probe":
		return printJSON(stdout, probe())
	case "proxy":
		return proxy(a[0], a[1], stdout)
	case "version":
		fmt.Fprintln(stdout, protocol.Version)
	}
	return nil
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
func initLoop() {
	// PID 1 does little work; one P and a reserve of threads keep it alive
	// when the sandbox's pids run out (see reserveThreads).
	runtime.GOMAXPROCS(1)
	reserveThreads(initThreads)
	signal.Ignore(pid1Ignored...)
	w := newWatcher(root)
	go w.serve()
	if s := os.Getenv("LITTERBOX_EGRESS"); s != "" {
		go forwardEgress(s)
	}
	go w.measure(30 * time.Second)
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

func probe() *protocol.Probe {
	p := &protocol.Probe{Version: protocol.Version, Arch: runtime.GOARCH, User: os.Getuid()}
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
