// Package procgroup starts a command in a session of its own and, when it is
// over, kills every process it left behind. It is the sandbox helper's way of
// running an agent's command; it lives under runner/ because runner is the one
// place that starts processes.
package procgroup

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Cmd is one command run in a new session. When it is over, Kill ends
// every process it left behind, found by the process table (see Strays),
// not by anything a process could shed: a session, a process group, an
// environment.
type Cmd struct {
	cmd *exec.Cmd
	// before is the process table as the command started.
	before Table
}

// Start runs argv in dir with env plus the marker, stdin from /dev/null.
// stdout and stderr are files (pipe ends) handed to the command as they are,
// so no copying goroutine outlives the command's main process. The marker
// names the call in the processes' environment, for a human who looks; the
// kill does not rely on it.
func Start(argv []string, dir string, env []string, marker string, stdout, stderr *os.File) (*Cmd, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = dir
	c.Env = append(env, marker)
	c.Stdout, c.Stderr = stdout, stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	before := ReadTable()
	if err := c.Start(); err != nil {
		return nil, err
	}
	return &Cmd{cmd: c, before: before}, nil
}

// Wait waits for the command's main process and returns its exit code
// (128+N for a signal N, as a shell reports it).
func (c *Cmd) Wait() int {
	err := c.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 127
	}
	return 0
}

// killRounds bounds the rounds of a kill: a fork loop may race it, and
// each round kills what the last one missed.
const killRounds = 100

// Kill kills the command's process group, then every process that is the
// call's by Strays, round after round until a round finds none (a process
// may fork while it is being killed), and waits a moment for PID 1 to reap
// them: until then each still holds a pid of the sandbox's limit, and what
// runs next (the helper's own threads) may find none free after a fork
// bomb.
func (c *Cmd) Kill() {
	if c.cmd.Process != nil {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
	defer awaitReaped(time.Second)
	self, orphanage := os.Getpid(), 0
	if underExec(ReadTable(), self, os.Getppid()) {
		// Started from outside the PID namespace (docker exec, kubectl
		// exec), or by a process that was (the helper's serve): a
		// sandbox, whose PID 1 adopts the call's orphans.
		orphanage = 1
	}
	for range killRounds {
		strays, unsure := Strays(c.before, ReadTable(), self, orphanage)
		if len(strays) == 0 && !unsure {
			return
		}
		for _, p := range strays {
			killProc(p)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// underExec reports whether self (whose parent is ppid) descends from a
// process started from outside its PID namespace (a parent pid of 0)
// other than PID 1: a command of a sandbox's exec. On a host every chain
// ends at PID 1.
func underExec(t Table, self, ppid int) bool {
	if ppid == 0 {
		return true
	}
	p, ok := t[self]
	for range len(t) + 1 {
		if !ok || p.PID == 1 {
			return false
		}
		if p.PPID == 0 {
			return true
		}
		p, ok = t[p.PPID]
	}
	return false
}

// KillMarked kills every process whose environment holds marker and every
// process descending from one (which may have cleared its environment),
// until none is left, and waits a moment for PID 1 to reap them.
func KillMarked(marker string) {
	defer awaitReaped(time.Second)
	self := os.Getpid()
	for range killRounds {
		t := ReadTable()
		var roots []int
		for pid := range t {
			if pid != self && pid != 1 && hasMarker(pid, marker) {
				roots = append(roots, pid)
			}
		}
		victims := Descendants(t, roots, self)
		if len(victims) == 0 {
			return
		}
		for _, p := range victims {
			killProc(p)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// awaitReaped waits, up to max, until no zombie is left for PID 1 to reap
// (a zombie another process owns is that process's business).
func awaitReaped(max time.Duration) {
	for deadline := time.Now().Add(max); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if !orphanZombies() {
			return
		}
	}
}

// orphanZombies reports whether a zombie waits for PID 1.
func orphanZombies() bool {
	for _, p := range ReadTable() {
		if p.Zombie && p.PPID == 1 {
			return true
		}
	}
	return false
}

// Replace runs argv in place of this process, in dir (unless empty), with
// env: the helper's way of giving a command the environment an engine's
// exec cannot pass (kubectl exec has no --env or --workdir).
func Replace(argv []string, dir string, env []string) error {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	if dir != "" {
		if err := os.Chdir(dir); err != nil {
			return err
		}
	}
	return syscall.Exec(path, argv, env)
}

// Find is where program is in this process's PATH, "" when it is not.
func Find(program string) string {
	path, err := exec.LookPath(program)
	if err != nil {
		return ""
	}
	return path
}

// NotFound reports whether Replace failed for want of the command.
func NotFound(err error) bool { return errors.Is(err, exec.ErrNotFound) }

// StartChild runs argv with env and the given stdio files in the caller's
// session: a process of the caller's own program that it waits for (the
// helper's serve runs each call's act so). Wait gives its exit code.
func StartChild(argv []string, env []string, stdin, stdout, stderr *os.File) (*Cmd, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = env
	c.Stdin, c.Stdout, c.Stderr = stdin, stdout, stderr
	if err := c.Start(); err != nil {
		return nil, err
	}
	return &Cmd{cmd: c}, nil
}

// Spawn starts argv in a session of its own, stdio on /dev/null, and does
// not wait for it: a detached exec (docker exec -d) where the engine has
// none. PID 1 reaps it.
func Spawn(argv []string, dir string, env []string) error {
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir, c.Env = dir, env
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return err
	}
	return c.Process.Release()
}
