// Command standin behaves like a coding agent run inside a sandbox by
// `litterbox run`, for the tests (no real agent or API is reachable
// there): it asks for a task at a prompt, edits files over several
// seconds with pauses between, leaves a process of its own running in the
// background, says what it did and exits.
//
//	standin [-steps N] [-pause D] [-exit CODE]
//
// It works in the current directory. Interrupted (SIGINT, SIGTERM) it
// says so and exits 130, leaving what it wrote.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

func main() {
	steps := flag.Int("steps", 4, "files to write, one per step")
	pause := flag.Duration("pause", 2500*time.Millisecond, "pause after each step")
	exitCode := flag.Int("exit", 0, "status to exit with")
	flag.Parse()

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		fmt.Println("standin: interrupted")
		os.Exit(130)
	}()

	fmt.Print("standin> what shall I do? ")
	task, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if task == "" {
		task = "nothing in particular\n"
	}
	fmt.Printf("standin: working on: %s", task)
	// A process of its own, left running: the session's end must stop it.
	bg := exec.Command("sleep", "600")
	if err := bg.Start(); err != nil {
		fail(err)
	}
	fmt.Printf("standin: background process %d\n", bg.Process.Pid)
	for i := 1; i <= *steps; i++ {
		p := filepath.Join("standin", fmt.Sprintf("step-%d.txt", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(p, []byte(fmt.Sprintf("step %d of %d: %s", i, *steps, task)), 0o644); err != nil {
			fail(err)
		}
		fmt.Printf("standin: wrote %s\n", p)
		time.Sleep(*pause)
	}
	fmt.Println("standin: done")
	os.Exit(*exitCode)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "standin:", err)
	os.Exit(1)
}
