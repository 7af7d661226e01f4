// Package procgroup starts a command in a session of its own and, when it is
// over, kills every process it left behind. It is the sandbox helper's way of
// running an agent's command; it lives under runner/ because runner is the one
// place that starts processes.
package procgroup

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Cmd is one command run in a new session, marked with an environment
// variable that every process it starts inherits (also those that start
// sessions of their own), so Kill finds them all.
type Cmd struct {
	cmd    *exec.Cmd
	marker string
}

// Start runs argv in dir with env plus the marker, stdin from /dev/null.
// stdout and stderr are files (pipe ends) handed to the command as they are,
// so no copying goroutine outlives the command's main process.
func Start(argv []string, dir string, env []string, marker string, stdout, stderr *os.File) (*Cmd, error) {
	c := exec.Command(argv[0], argv[1:]...)
	c.Dir = dir
	c.Env = append(env, marker)
	c.Stdout, c.Stderr = stdout, stderr
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := c.Start(); err != nil {
		return nil, err
	}
	return &Cmd{cmd: c, marker: marker}, nil
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

// Kill kills the command's process group and every process carrying its
// marker, until none is left (a process may fork while it is being killed).
func (c *Cmd) Kill() {
	if c.cmd.Process != nil {
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	}
	KillMarked(c.marker)
}

// KillMarked kills every process whose environment holds marker, and their
// process groups, until none is left, and waits a moment for PID 1 to reap
// them: until then each still holds a pid of the sandbox's limit, and what
// runs next (the helper's own threads) may find none free after a fork bomb.
func KillMarked(marker string) {
	defer awaitReaped(time.Second)
	for i := 0; i < 50; i++ {
		pids := Marked(marker)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			killMarked(p, marker)
			_ = syscall.Kill(-p, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Marked returns the live processes whose environment holds marker. A
// zombie's environ reads empty, so the dead are not counted.
func Marked(marker string) []int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	self := os.Getpid()
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		if hasMarker(pid, marker) {
			out = append(out, pid)
		}
	}
	return out
}

// hasMarker reports whether process pid's environment holds marker. A
// zombie's environ reads empty.
func hasMarker(pid int, marker string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	want := []byte(marker + "\x00")
	return err == nil && (bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)))
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
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// "pid (comm) state ppid ...": comm may hold anything, so the
		// fields are read after its last ')'.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(data[i+1:])
		if len(fields) >= 2 && string(fields[0]) == "Z" && string(fields[1]) == "1" {
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
