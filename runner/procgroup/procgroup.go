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
// process groups, until none is left.
func KillMarked(marker string) {
	for i := 0; i < 50; i++ {
		pids := Marked(marker)
		if len(pids) == 0 {
			return
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
			_ = syscall.Kill(-p, syscall.SIGKILL)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Marked returns the live processes whose environment holds marker. A
// zombie's environ reads empty, so the dead are not counted.
func Marked(marker string) []int {
	want := []byte(marker + "\x00")
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	self := os.Getpid()
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(d + "/environ")
		if err != nil {
			continue
		}
		if bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)) {
			out = append(out, pid)
		}
	}
	return out
}
